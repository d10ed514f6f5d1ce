package spice.authority.os.posix;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The per-platform facts os-posix depends on: the layout of {@code struct stat}, the sizes of
 * the C types whose width differs, and the flag and errno constants. One table per supported
 * platform; the current one is selected once ({@link #current()}).
 *
 * <p>The tables are plain data with the C names as keys, so that the test built on
 * {@code native/stat_probe.c} can check them against the C headers of the machine it runs
 * on. Pure Java: nothing here touches {@code java.lang.foreign}.
 */
final class PosixPlatform {

    /** Layout of one {@code struct stat} field. */
    record Field(int offset, int size) {}

    /**
     * Offsets in Linux's {@code struct statx} (the same on every architecture), of the members
     * {@link Libc#statx} reads, and the size of the struct.
     */
    record StatxLayout(int size, int mask, int nlink, int uid, int gid, int mode, int ino, int fileSize,
                       int devMajor, int devMinor, int mountId) {}

    private static final Map<String, PosixPlatform> TABLES = Map.of(
            "linux-x86_64", linuxX8664(),
            "linux-aarch64", linuxAarch64(),
            "macos-x86_64", macos("macos-x86_64", "$INODE64"),
            "macos-aarch64", macos("macos-aarch64", ""));

    private static final Optional<PosixPlatform> CURRENT =
            Optional.ofNullable(TABLES.get(key(System.getProperty("os.name"), System.getProperty("os.arch"))));

    final String name;
    /** Symbol names of the 64-bit-inode stat functions (macOS x86_64 needs the suffixed ones). */
    final String fstatSymbol;
    final String fstatatSymbol;
    /**
     * macOS only (null on Linux): the symbol names of the 64-bit-inode directory-stream functions
     * ({@code fdopendir$INODE64} and {@code readdir_r$INODE64} on x86_64, where the unsuffixed
     * names are the 32-bit-inode ones with another {@code DIR} and {@code struct dirent}; plain on
     * arm64). {@code closedir} has one name on both.
     */
    final String fdopendirSymbol;
    final String readdirRSymbol;
    /** The uid the kernel shows for unmapped ids in a user namespace; -1 when there is none. */
    final long overflowUid;

    private final Map<String, Long> constants;
    /**
     * Constants of the process watcher. Kept apart from {@link #constants()}, which
     * {@code native/stat_probe.c} checks key for key and which does not print these;
     * {@code ProcessConstantsTest} checks them against the headers instead.
     */
    private final Map<String, Long> processConstants;
    /**
     * Directory listing: the {@code getdents64} syscall number and the layout of
     * {@code struct linux_dirent64}. Empty on macOS, which lists with directory streams
     * ({@link #hasDirectoryStream()}, layout in {@link #darwinConstants()}). Kept apart like {@link #processConstants()};
     * {@code DirentLayoutTest} checks them against the headers.
     */
    private final Map<String, Long> directoryConstants;
    /**
     * macOS only: kqueue, {@code proc_pidinfo} and {@code LOCAL_PEERCRED} layouts and constants
     * ({@link DarwinLayout}). Empty on Linux. Kept apart like {@link #processConstants()};
     * {@code native/darwin_probe.c} prints exactly these keys ({@code DarwinProbeTest}).
     */
    private final Map<String, Long> darwinConstants;

    final int statSize;
    final Field stDev;
    final Field stIno;
    final Field stMode;
    final Field stNlink;
    final Field stUid;
    final Field stGid;
    final Field stSize;
    final int sizeofModeT;

    final int O_RDONLY;
    final int O_WRONLY;
    final int O_RDWR;
    final int O_CREAT;
    final int O_EXCL;
    final int O_TRUNC;
    final int O_NONBLOCK;
    final int O_DIRECTORY;
    final int O_NOFOLLOW;
    final int O_CLOEXEC;
    final int AT_FDCWD;
    final int AT_SYMLINK_NOFOLLOW;
    final int LOCK_EX;
    final int LOCK_NB;
    final int LOCK_UN;
    final int EPERM;
    final int ENOENT;
    final int EINTR;
    final int EAGAIN;
    final int EWOULDBLOCK;
    final int EACCES;
    final int EEXIST;
    final int ENOTDIR;
    final int ELOOP;

    /** {@code SYS_pidfd_open} from {@code <sys/syscall.h>}; -1 where there is no pidfd (macOS). */
    final long SYS_pidfd_open;
    final int ESRCH;
    final int POLLIN;
    final int POLLERR;
    final int POLLHUP;
    final int POLLNVAL;
    /** {@code EFD_CLOEXEC} and {@code EFD_NONBLOCK} of {@code <sys/eventfd.h>}; -1 without eventfd. */
    final int EFD_CLOEXEC;
    final int EFD_NONBLOCK;

    /** {@code SYS_getdents64} of {@code <sys/syscall.h>}; -1 where there is none (macOS). */
    final long SYS_getdents64;
    /** {@code AT_EMPTY_PATH} and {@code STATX_MNT_ID}; -1 where there is no {@code statx} (macOS). */
    final int AT_EMPTY_PATH;
    final int STATX_MNT_ID;
    /** Linux's {@code struct statx}; null where there is none (macOS). */
    final StatxLayout statx;
    /** Offsets in {@code struct linux_dirent64}: {@code d_reclen} (u16) and {@code d_name}. */
    final int direntReclen;
    final int direntName;

    private PosixPlatform(String name, String inode64Suffix, long overflowUid,
                          Map<String, Long> constants, Map<String, Long> processConstants,
                          Map<String, Long> directoryConstants, Map<String, Long> darwinConstants) {
        this.name = name;
        boolean mac = !darwinConstants.isEmpty();
        this.fstatSymbol = "fstat" + inode64Suffix;
        this.fstatatSymbol = "fstatat" + inode64Suffix;
        this.fdopendirSymbol = mac ? "fdopendir" + inode64Suffix : null;
        this.readdirRSymbol = mac ? "readdir_r" + inode64Suffix : null;
        this.darwinConstants = Map.copyOf(darwinConstants);
        this.overflowUid = overflowUid;
        this.constants = Map.copyOf(constants);
        statSize = i("sizeof.struct_stat");
        stDev = field("st_dev");
        AT_EMPTY_PATH = Math.toIntExact(constants.getOrDefault("AT_EMPTY_PATH", -1L));
        STATX_MNT_ID = Math.toIntExact(constants.getOrDefault("STATX_MNT_ID", -1L));
        statx = constants.containsKey("sizeof.struct_statx")
                ? new StatxLayout(i("sizeof.struct_statx"), i("offsetof.statx.stx_mask"), i("offsetof.statx.stx_nlink"),
                        i("offsetof.statx.stx_uid"), i("offsetof.statx.stx_gid"), i("offsetof.statx.stx_mode"),
                        i("offsetof.statx.stx_ino"), i("offsetof.statx.stx_size"), i("offsetof.statx.stx_dev_major"),
                        i("offsetof.statx.stx_dev_minor"), i("offsetof.statx.stx_mnt_id"))
                : null;
        stIno = field("st_ino");
        stMode = field("st_mode");
        stNlink = field("st_nlink");
        stUid = field("st_uid");
        stGid = field("st_gid");
        stSize = field("st_size");
        sizeofModeT = i("sizeof.mode_t");
        O_RDONLY = i("O_RDONLY");
        O_WRONLY = i("O_WRONLY");
        O_RDWR = i("O_RDWR");
        O_CREAT = i("O_CREAT");
        O_EXCL = i("O_EXCL");
        O_TRUNC = i("O_TRUNC");
        O_NONBLOCK = i("O_NONBLOCK");
        O_DIRECTORY = i("O_DIRECTORY");
        O_NOFOLLOW = i("O_NOFOLLOW");
        O_CLOEXEC = i("O_CLOEXEC");
        AT_FDCWD = i("AT_FDCWD");
        AT_SYMLINK_NOFOLLOW = i("AT_SYMLINK_NOFOLLOW");
        LOCK_EX = i("LOCK_EX");
        LOCK_NB = i("LOCK_NB");
        LOCK_UN = i("LOCK_UN");
        EPERM = i("EPERM");
        ENOENT = i("ENOENT");
        EINTR = i("EINTR");
        EAGAIN = i("EAGAIN");
        EWOULDBLOCK = i("EWOULDBLOCK");
        EACCES = i("EACCES");
        EEXIST = i("EEXIST");
        ENOTDIR = i("ENOTDIR");
        ELOOP = i("ELOOP");
        this.processConstants = Map.copyOf(processConstants);
        SYS_pidfd_open = processConstants.getOrDefault("SYS_pidfd_open", -1L);
        ESRCH = p("ESRCH");
        POLLIN = p("POLLIN");
        POLLERR = p("POLLERR");
        POLLHUP = p("POLLHUP");
        POLLNVAL = p("POLLNVAL");
        EFD_CLOEXEC = Math.toIntExact(processConstants.getOrDefault("EFD_CLOEXEC", -1L));
        EFD_NONBLOCK = Math.toIntExact(processConstants.getOrDefault("EFD_NONBLOCK", -1L));
        this.directoryConstants = Map.copyOf(directoryConstants);
        SYS_getdents64 = directoryConstants.getOrDefault("SYS_getdents64", -1L);
        direntReclen = Math.toIntExact(directoryConstants.getOrDefault("offsetof.dirent64.d_reclen", -1L));
        direntName = Math.toIntExact(directoryConstants.getOrDefault("offsetof.dirent64.d_name", -1L));
        if (SYS_getdents64 >= 0 && directoryConstants.get("sizeof.dirent64.d_reclen") != 2L) {
            throw new IllegalStateException("platform table " + name + ": d_reclen must be 2 bytes");
        }
    }

    /**
     * Whether this platform lists directories with {@code getdents64} (Linux). macOS has no
     * {@code getdents64}: see {@link #hasDirectoryStream()}.
     */
    boolean hasGetdents64() {
        return SYS_getdents64 >= 0 && direntReclen >= 0 && direntName > direntReclen;
    }

    /**
     * Whether this platform lists directories with {@code fdopendir}/{@code readdir_r}/{@code
     * closedir} over the macOS 64-bit-inode {@code struct dirent} ({@link DarwinLayout}).
     */
    boolean hasDirectoryStream() {
        return fdopendirSymbol != null && darwinConstants.containsKey("sizeof.struct_dirent");
    }

    /** The directory-listing constants by C name (not part of {@link #constants()}). */
    Map<String, Long> directoryConstants() {
        return directoryConstants;
    }

    /** Whether this platform watches processes with pidfd (Linux). */
    boolean hasPidfd() {
        return SYS_pidfd_open >= 0 && EFD_CLOEXEC >= 0;
    }

    /** Whether this platform watches processes with kqueue and {@code proc_pidinfo} (macOS). */
    boolean hasKqueue() {
        return !darwinConstants.isEmpty();
    }

    /** The macOS kqueue, proc_info and xucred facts by C name; empty on Linux. */
    Map<String, Long> darwinConstants() {
        return darwinConstants;
    }

    /** The process watcher's constants by C name (not part of {@link #constants()}). */
    Map<String, Long> processConstants() {
        return processConstants;
    }

    /** The table for this JVM's platform, if it is supported. Selected once. */
    static Optional<PosixPlatform> current() {
        return CURRENT;
    }

    /** The table for a platform name such as {@code linux-aarch64}. */
    static Optional<PosixPlatform> forName(String name) {
        return Optional.ofNullable(TABLES.get(name));
    }

    /** Maps Java's {@code os.name} and {@code os.arch} to a table name; unknown values map to a name with no table. */
    static String key(String osName, String osArch) {
        String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
        String arch = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
        String o = os.equals("linux") ? "linux" : os.startsWith("mac os x") || os.equals("darwin") ? "macos" : os;
        String a = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return o + "-" + a;
    }

    /** Every constant and layout fact by its C name, as {@code native/stat_probe.c} prints them. */
    Map<String, Long> constants() {
        return constants;
    }

    /** The symbolic name of an errno value, for messages ({@code "errno 99"} if unknown). */
    String errnoName(int errno) {
        for (Map.Entry<String, Long> e : constants.entrySet()) {
            if (e.getKey().startsWith("E") && e.getValue() == errno && !e.getKey().equals("EWOULDBLOCK")) {
                return e.getKey();
            }
        }
        if (processConstants.get("ESRCH") instanceof Long v && v == errno) {
            return "ESRCH";
        }
        return "errno " + errno;
    }

    /** The value of a named errno constant of this platform. */
    int errnoValue(String name) {
        return i(name);
    }

    private int i(String key) {
        Long v = constants.get(key);
        if (v == null) {
            throw new IllegalStateException("platform table " + name + " lacks " + key);
        }
        return Math.toIntExact(v);
    }

    private int p(String key) {
        Long v = processConstants.get(key);
        if (v == null) {
            throw new IllegalStateException("platform table " + name + " lacks " + key);
        }
        return Math.toIntExact(v);
    }

    private Field field(String member) {
        return new Field(i("offsetof.stat." + member), i("sizeof.stat." + member));
    }

    private static void stat(Map<String, Long> m, String member, int offset, int size) {
        m.put("offsetof.stat." + member, (long) offset);
        m.put("sizeof.stat." + member, (long) size);
    }

    private static Map<String, Long> common() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("O_RDONLY", 0L);
        m.put("O_WRONLY", 1L);
        m.put("O_RDWR", 2L);
        m.put("LOCK_SH", 1L);
        m.put("LOCK_EX", 2L);
        m.put("LOCK_NB", 4L);
        m.put("LOCK_UN", 8L);
        m.put("S_IFMT", 0170000L);
        m.put("S_IFDIR", 0040000L);
        m.put("S_IFREG", 0100000L);
        m.put("S_IFLNK", 0120000L);
        m.put("S_IFIFO", 0010000L);
        m.put("S_IFSOCK", 0140000L);
        m.put("S_IFCHR", 0020000L);
        m.put("S_IFBLK", 0060000L);
        m.put("S_ISVTX", 01000L);
        m.put("EPERM", 1L);
        m.put("ENOENT", 2L);
        m.put("EINTR", 4L);
        m.put("EIO", 5L);
        m.put("ENXIO", 6L);
        m.put("EBADF", 9L);
        m.put("ENOMEM", 12L);
        m.put("EACCES", 13L);
        m.put("EBUSY", 16L);
        m.put("EEXIST", 17L);
        m.put("EXDEV", 18L);
        m.put("ENOTDIR", 20L);
        m.put("EISDIR", 21L);
        m.put("EINVAL", 22L);
        m.put("EMFILE", 24L);
        m.put("ENOSPC", 28L);
        m.put("EROFS", 30L);
        m.put("EMLINK", 31L);
        m.put("sizeof.uid_t", 4L);
        return m;
    }

    /** poll(2) and ESRCH: the same values on Linux and macOS. */
    private static Map<String, Long> processCommon() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("ESRCH", 3L);
        m.put("POLLIN", 0x001L);
        m.put("POLLERR", 0x008L);
        m.put("POLLHUP", 0x010L);
        m.put("POLLNVAL", 0x020L);
        return m;
    }

    /**
     * Linux: pidfd_open(2) is syscall 434 on both x86_64 and aarch64 (asm-generic numbering
     * since 5.3 unified new syscalls); eventfd flags equal O_CLOEXEC and O_NONBLOCK.
     */
    private static Map<String, Long> linuxProcess() {
        Map<String, Long> m = processCommon();
        m.put("SYS_pidfd_open", 434L);
        m.put("EFD_CLOEXEC", 02000000L);
        m.put("EFD_NONBLOCK", 04000L);
        return m;
    }

    /**
     * Linux {@code struct linux_dirent64} (glibc's {@code struct dirent64}), the same on x86_64
     * and aarch64: {@code u64 d_ino} at 0, {@code s64 d_off} at 8, {@code u16 d_reclen} at 16,
     * {@code u8 d_type} at 18, {@code char d_name[]} from 19.
     */
    private static Map<String, Long> linuxDirectory(long sysGetdents64) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("SYS_getdents64", sysGetdents64);
        m.put("offsetof.dirent64.d_ino", 0L);
        m.put("offsetof.dirent64.d_reclen", 16L);
        m.put("sizeof.dirent64.d_reclen", 2L);
        m.put("offsetof.dirent64.d_type", 18L);
        m.put("offsetof.dirent64.d_name", 19L);
        return m;
    }

    private static Map<String, Long> linuxCommon() {
        Map<String, Long> m = common();
        m.put("O_CREAT", 0100L);
        m.put("O_EXCL", 0200L);
        m.put("O_TRUNC", 01000L);
        m.put("O_NONBLOCK", 04000L);
        m.put("O_CLOEXEC", 02000000L);
        m.put("AT_FDCWD", -100L);
        m.put("AT_SYMLINK_NOFOLLOW", 0x100L);
        m.put("AT_REMOVEDIR", 0x200L);
        m.put("EAGAIN", 11L);
        m.put("EWOULDBLOCK", 11L);
        m.put("ENAMETOOLONG", 36L);
        m.put("ENOTEMPTY", 39L);
        m.put("ELOOP", 40L);
        m.put("EOPNOTSUPP", 95L);
        m.put("EDQUOT", 122L);
        m.put("sizeof.mode_t", 4L);
        // statx (Linux 4.11; the mount ID since 5.8): one layout on every architecture.
        m.put("AT_EMPTY_PATH", 0x1000L);
        m.put("STATX_MNT_ID", 0x1000L);
        m.put("sizeof.struct_statx", 256L);
        m.put("offsetof.statx.stx_mask", 0L);
        m.put("offsetof.statx.stx_nlink", 16L);
        m.put("offsetof.statx.stx_uid", 20L);
        m.put("offsetof.statx.stx_gid", 24L);
        m.put("offsetof.statx.stx_mode", 28L);
        m.put("offsetof.statx.stx_ino", 32L);
        m.put("offsetof.statx.stx_size", 40L);
        m.put("offsetof.statx.stx_dev_major", 136L);
        m.put("offsetof.statx.stx_dev_minor", 140L);
        m.put("offsetof.statx.stx_mnt_id", 144L);
        return m;
    }

    /** glibc/musl x86_64: the kernel's {@code struct stat}; nlink (8 bytes) comes before mode. */
    private static PosixPlatform linuxX8664() {
        Map<String, Long> m = linuxCommon();
        m.put("O_DIRECTORY", 0200000L);
        m.put("O_NOFOLLOW", 0400000L);
        m.put("sizeof.struct_stat", 144L);
        stat(m, "st_dev", 0, 8);
        stat(m, "st_ino", 8, 8);
        stat(m, "st_nlink", 16, 8);
        stat(m, "st_mode", 24, 4);
        stat(m, "st_uid", 28, 4);
        stat(m, "st_gid", 32, 4);
        stat(m, "st_size", 48, 8);
        return new PosixPlatform("linux-x86_64", "", 65534, m, linuxProcess(), linuxDirectory(217), Map.of());
    }

    /** glibc/musl aarch64: the asm-generic {@code struct stat}; mode before a 4-byte nlink. */
    private static PosixPlatform linuxAarch64() {
        Map<String, Long> m = linuxCommon();
        m.put("O_DIRECTORY", 040000L);
        m.put("O_NOFOLLOW", 0100000L);
        m.put("sizeof.struct_stat", 128L);
        stat(m, "st_dev", 0, 8);
        stat(m, "st_ino", 8, 8);
        stat(m, "st_mode", 16, 4);
        stat(m, "st_nlink", 20, 4);
        stat(m, "st_uid", 24, 4);
        stat(m, "st_gid", 28, 4);
        stat(m, "st_size", 48, 8);
        return new PosixPlatform("linux-aarch64", "", 65534, m, linuxProcess(), linuxDirectory(61), Map.of());
    }

    /**
     * macOS, 64-bit inodes (the only layout on arm64; {@code $INODE64} symbols on x86_64, named
     * by {@code inode64Suffix}).
     */
    private static PosixPlatform macos(String name, String inode64Suffix) {
        Map<String, Long> m = common();
        m.put("O_NONBLOCK", 0x4L);
        m.put("O_CREAT", 0x200L);
        m.put("O_TRUNC", 0x400L);
        m.put("O_EXCL", 0x800L);
        m.put("O_NOFOLLOW", 0x100L);
        m.put("O_DIRECTORY", 0x100000L);
        m.put("O_CLOEXEC", 0x1000000L);
        m.put("AT_FDCWD", -2L);
        m.put("AT_SYMLINK_NOFOLLOW", 0x20L);
        m.put("AT_REMOVEDIR", 0x80L);
        m.put("EAGAIN", 35L);
        m.put("EWOULDBLOCK", 35L);
        m.put("ELOOP", 62L);
        m.put("ENAMETOOLONG", 63L);
        m.put("ENOTEMPTY", 66L);
        m.put("EDQUOT", 69L);
        m.put("EOPNOTSUPP", 102L);
        m.put("sizeof.mode_t", 2L);
        m.put("sizeof.struct_stat", 144L);
        stat(m, "st_dev", 0, 4);
        stat(m, "st_mode", 4, 2);
        stat(m, "st_nlink", 6, 2);
        stat(m, "st_ino", 8, 8);
        stat(m, "st_uid", 16, 4);
        stat(m, "st_gid", 20, 4);
        stat(m, "st_size", 96, 8);
        return new PosixPlatform(name, inode64Suffix, -1, m, processCommon(), Map.of(), macosDarwin());
    }

    private static void member(Map<String, Long> m, String struct, String member, int offset, int size) {
        m.put("offsetof." + struct + "." + member, (long) offset);
        m.put("sizeof." + struct + "." + member, (long) size);
    }

    /**
     * macOS {@code <sys/event.h>}, {@code <sys/proc_info.h>}, {@code <sys/proc.h>},
     * {@code <sys/ucred.h>} and {@code <sys/un.h>}: the same on x86_64 and arm64 (both LP64; the
     * {@code #pragma pack(4)} of {@code struct kevent} applies to i386 only). Checked on macOS by
     * {@code native/darwin_probe.c}; never compiled on this project's Linux machines.
     *
     * <pre>
     * struct kevent { uintptr_t ident; int16_t filter; uint16_t flags; uint32_t fflags;
     *                 intptr_t data; void *udata; };                          // 32 bytes
     * struct proc_bsdinfo { uint32_t pbi_flags, pbi_status, pbi_xstatus, pbi_pid, pbi_ppid;
     *                 uid_t pbi_uid; gid_t pbi_gid; uid_t pbi_ruid; gid_t pbi_rgid;
     *                 uid_t pbi_svuid; gid_t pbi_svgid; uint32_t rfu_1; char pbi_comm[16];
     *                 char pbi_name[32]; uint32_t pbi_nfiles, pbi_pgid, pbi_pjobc, e_tdev,
     *                 e_tpgid; int32_t pbi_nice; uint64_t pbi_start_tvsec, pbi_start_tvusec; };
     *                                                                         // 136 bytes
     * struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups;
     *                 gid_t cr_groups[NGROUPS]; };                            // 76 bytes
     * struct dirent { uint64_t d_ino; uint64_t d_seekoff; uint16_t d_reclen;  // 64-bit inodes:
     *                 uint16_t d_namlen; uint8_t d_type;                      // arm64, and x86_64
     *                 char d_name[MAXPATHLEN]; };                             // with $INODE64
     *                                                                         // 1048 bytes
     * </pre>
     *
     * <p>{@code symbol.*} are 1 when the function the header declares is the symbol named in
     * {@link #fdopendirSymbol}, {@link #readdirRSymbol} or {@code closedir} (the probe compares
     * the two addresses with {@code dlsym}).
     */
    private static Map<String, Long> macosDarwin() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("sizeof.struct_kevent", 32L);
        member(m, "kevent", "ident", 0, 8);
        member(m, "kevent", "filter", 8, 2);
        member(m, "kevent", "flags", 10, 2);
        member(m, "kevent", "fflags", 12, 4);
        member(m, "kevent", "data", 16, 8);
        member(m, "kevent", "udata", 24, 8);
        m.put("sizeof.struct_timespec", 16L);
        m.put("EVFILT_PROC", -5L);
        m.put("EV_ADD", 0x0001L);
        m.put("EV_DELETE", 0x0002L);
        m.put("EV_ONESHOT", 0x0010L);
        m.put("EV_RECEIPT", 0x0040L);
        m.put("EV_ERROR", 0x4000L);
        m.put("EV_EOF", 0x8000L);
        m.put("NOTE_EXIT", 0x80000000L);
        m.put("sizeof.struct_proc_bsdinfo", 136L);
        member(m, "proc_bsdinfo", "pbi_flags", 0, 4);
        member(m, "proc_bsdinfo", "pbi_status", 4, 4);
        member(m, "proc_bsdinfo", "pbi_pid", 12, 4);
        member(m, "proc_bsdinfo", "pbi_ppid", 16, 4);
        member(m, "proc_bsdinfo", "pbi_uid", 20, 4);
        member(m, "proc_bsdinfo", "pbi_ruid", 28, 4);
        member(m, "proc_bsdinfo", "pbi_start_tvsec", 120, 8);
        member(m, "proc_bsdinfo", "pbi_start_tvusec", 128, 8);
        m.put("PROC_PIDTBSDINFO", 3L);
        m.put("PROC_FLAG_INEXIT", 4L);
        m.put("SZOMB", 5L);
        m.put("sizeof.struct_xucred", 76L);
        member(m, "xucred", "cr_version", 0, 4);
        member(m, "xucred", "cr_uid", 4, 4);
        member(m, "xucred", "cr_ngroups", 8, 2);
        m.put("XUCRED_VERSION", 0L);
        m.put("SOL_LOCAL", 0L);
        m.put("LOCAL_PEERCRED", 0x001L);
        m.put("LOCAL_PEERPID", 0x002L);
        m.put("sizeof.pid_t", 4L);
        m.put("sizeof.socklen_t", 4L);
        m.put("sizeof.struct_dirent", 1048L);
        member(m, "dirent", "d_ino", 0, 8);
        member(m, "dirent", "d_seekoff", 8, 8);
        member(m, "dirent", "d_reclen", 16, 2);
        member(m, "dirent", "d_namlen", 18, 2);
        member(m, "dirent", "d_type", 20, 1);
        member(m, "dirent", "d_name", 21, 1024);
        m.put("symbol.fdopendir", 1L);
        m.put("symbol.readdir_r", 1L);
        m.put("symbol.closedir", 1L);
        return m;
    }

    @Override
    public String toString() {
        return name;
    }
}
