package spice.authority.os.posix;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A simulated macOS kernel and libSystem for the directory listing, on Linux: one retained
 * directory descriptor, the {@code openat}, {@code fdopendir}, {@code readdir_r},
 * {@code closedir} and {@code close} the listing makes, and the directory's entries, which
 * {@code readdir_r} copies as the 64-bit-inode {@code struct dirent} of the macOS table (its
 * offsets read from the table's keys, not from {@link DarwinLayout}).
 *
 * <p>It keeps the books a real kernel keeps: which descriptors are open, which a stream owns,
 * which streams are open. Whatever the kernel would punish (closing a descriptor a stream owns,
 * a double close or closedir, reading a closed stream, a stream over the retained descriptor)
 * is recorded in {@link #violations()}; a test asserts the list is empty. Faults are armed per
 * call and occurrence. Every other {@link Syscalls} call fails the test: a listing has no
 * business making it. Not thread-safe; one listing at a time.
 */
class FakeDarwinDirectory implements Syscalls {

    static final int RETAINED = 7;
    private static final long STREAM_BASE = 0x7f00_0000_1000L;

    final PosixPlatform mac;
    private final Map<String, Long> table;
    /** The entries in directory order, {@code .} and {@code ..} first, as on APFS. */
    private final List<byte[]> entries = new ArrayList<>();
    /** Raw entries to copy instead of the encoded one, by index in {@link #entries}. */
    private final Map<Integer, byte[]> raw = new HashMap<>();

    private final Set<Integer> openFds = new HashSet<>();
    private final Map<Long, Integer> streams = new HashMap<>(); // DIR* -> the descriptor it owns
    private final Map<Long, Integer> positions = new HashMap<>();
    private final List<String> violations = new ArrayList<>();
    private final List<String> calls = new ArrayList<>();
    private final Map<String, int[]> faults = new HashMap<>(); // call -> {occurrence, errno}
    /** call -> {occurrence}: thrown as what Libc throws when a downcall fails unexpectedly. */
    private final Map<String, Integer> unchecked = new HashMap<>();
    private final Map<String, Integer> counts = new HashMap<>();
    private int nextFd = 20;
    private long nextStream = STREAM_BASE;

    FakeDarwinDirectory(String platform) {
        mac = PosixPlatform.forName(platform).orElseThrow();
        table = mac.darwinConstants();
        add(".");
        add("..");
    }

    FakeDarwinDirectory add(String name) {
        return add(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    FakeDarwinDirectory add(byte[] name) {
        entries.add(name.clone());
        return this;
    }

    /** Adds an entry whose {@code struct dirent} bytes are {@code entry} as they are. */
    FakeDarwinDirectory addRaw(byte[] entry) {
        raw.put(entries.size(), entry.clone());
        entries.add(new byte[0]);
        return this;
    }

    /** Fails the {@code skip}-th next call of {@code call} (0: the next) with {@code errno}. */
    FakeDarwinDirectory fail(String call, int skip, String errno) {
        faults.put(call, new int[] {counts.getOrDefault(call, 0) + skip, mac.errnoValue(errno)});
        return this;
    }

    /**
     * Throws, at the {@code skip}-th next call of {@code call} and before the call does anything,
     * the {@link AssertionError} that {@code Libc} throws when a downcall fails unexpectedly (a
     * failed class initialisation, native memory exhausted while allocating the call's arena):
     * no stream is made, no descriptor is taken.
     */
    FakeDarwinDirectory failUnexpectedly(String call, int skip) {
        unchecked.put(call, counts.getOrDefault(call, 0) + skip);
        return this;
    }

    int count(String call) {
        return counts.getOrDefault(call, 0);
    }

    List<String> calls() {
        return calls;
    }

    /** Broken rules and what is still open (descriptors other than the retained one, streams). */
    List<String> violations() {
        List<String> v = new ArrayList<>(violations);
        if (!openFds.isEmpty()) {
            v.add("descriptors left open: " + openFds);
        }
        if (!streams.isEmpty()) {
            v.add("streams left open: " + streams.size());
        }
        return v;
    }

    int direntSize() {
        return Math.toIntExact(table.get("sizeof.struct_dirent"));
    }

    /** One {@code struct dirent} as the kernel writes it and {@code readdir_r} copies it. */
    byte[] encode(long ino, byte[] name) {
        int nameAt = Math.toIntExact(table.get("offsetof.dirent.d_name"));
        byte[] e = new byte[direntSize()];
        ByteBuffer b = ByteBuffer.wrap(e).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(Math.toIntExact(table.get("offsetof.dirent.d_ino")), ino);
        // DIRENT64_LEN of <sys/dirent.h>: the header and the name with its NUL, rounded up to 8.
        b.putShort(Math.toIntExact(table.get("offsetof.dirent.d_reclen")), (short) ((nameAt + name.length + 1 + 7) & ~7));
        b.putShort(Math.toIntExact(table.get("offsetof.dirent.d_namlen")), (short) name.length);
        e[Math.toIntExact(table.get("offsetof.dirent.d_type"))] = 8; // DT_REG
        System.arraycopy(name, 0, e, nameAt, name.length);
        return e;
    }

    private void enter(String call) throws PosixException {
        calls.add(call);
        int n = counts.merge(call, 1, Integer::sum) - 1;
        Integer u = unchecked.get(call);
        if (u != null && u == n) {
            unchecked.remove(call);
            throw new AssertionError("downcall failed unexpectedly", new OutOfMemoryError(call));
        }
        int[] f = faults.get(call);
        if (f != null && f[0] == n) {
            faults.remove(call);
            throw new PosixException(f[1], call);
        }
    }

    @Override
    public int openat(int dirfd, String pathname, int flags, int mode) throws PosixException {
        enter("openat");
        if (dirfd != RETAINED || !pathname.equals(".")) {
            violations.add("openat(" + dirfd + ", " + pathname + ")");
            throw new PosixException(mac.errnoValue("EBADF"), "openat");
        }
        int expected = mac.O_RDONLY | mac.O_DIRECTORY | mac.O_NOFOLLOW | mac.O_CLOEXEC;
        if (flags != expected) {
            violations.add("openat flags 0x" + Integer.toHexString(flags) + ", not the macOS 0x"
                    + Integer.toHexString(expected));
        }
        int fd = nextFd++;
        openFds.add(fd);
        return fd;
    }

    @Override
    public long fdopendir(int fd) throws PosixException {
        enter("fdopendir");
        if (fd == RETAINED) {
            violations.add("fdopendir of the retained descriptor: closedir would close it");
        }
        if (!openFds.contains(fd) || streams.containsValue(fd)) {
            violations.add("fdopendir(" + fd + ") of a descriptor not open or already owned");
            throw new PosixException(mac.errnoValue("EBADF"), "fdopendir");
        }
        long dir = nextStream;
        nextStream += 0x100;
        streams.put(dir, fd);
        positions.put(dir, 0);
        return dir;
    }

    @Override
    public boolean readdir_r(long dir, byte[] entry) throws PosixException {
        if (!streams.containsKey(dir)) {
            violations.add("readdir_r of a stream not open");
            throw new PosixException(mac.errnoValue("EBADF"), "readdir_r");
        }
        if (entry.length < direntSize()) {
            violations.add("readdir_r into " + entry.length + " bytes, less than sizeof(struct dirent)");
        }
        enter("readdir_r");
        int pos = positions.get(dir);
        if (pos == entries.size()) {
            return false;
        }
        positions.put(dir, pos + 1);
        if (raw.containsKey(pos)) {
            byte[] e = raw.get(pos);
            System.arraycopy(e, 0, entry, 0, Math.min(e.length, entry.length));
            return true;
        }
        byte[] e = encode(1000 + pos, entries.get(pos));
        // readdir_r copies the header and the name with its NUL, not the whole struct: what lies
        // beyond is the caller's old bytes (here, the tail of a longer earlier name).
        int reclen = Short.toUnsignedInt(ByteBuffer.wrap(e).order(ByteOrder.LITTLE_ENDIAN)
                .getShort(Math.toIntExact(table.get("offsetof.dirent.d_reclen"))));
        System.arraycopy(e, 0, entry, 0, Math.min(reclen, entry.length));
        return true;
    }

    @Override
    public void closedir(long dir) throws PosixException {
        calls.add("closedir");
        counts.merge("closedir", 1, Integer::sum);
        Integer fd = streams.remove(dir);
        if (fd == null) {
            violations.add("closedir of a stream not open");
            throw new PosixException(mac.errnoValue("EBADF"), "closedir");
        }
        positions.remove(dir);
        openFds.remove(fd);
    }

    @Override
    public void close(int fd) throws PosixException {
        calls.add("close");
        counts.merge("close", 1, Integer::sum);
        if (fd == RETAINED) {
            violations.add("close of the retained descriptor");
        }
        if (streams.containsValue(fd)) {
            violations.add("close(" + fd + ") of a descriptor a stream owns (closedir closes it)");
        }
        if (!openFds.remove(fd)) {
            violations.add("close(" + fd + ") of a descriptor not open");
            throw new PosixException(mac.errnoValue("EBADF"), "close");
        }
    }

    @Override
    public int getdents64(int fd, byte[] buf) {
        throw new AssertionError("macOS has no getdents64");
    }

    @Override
    public long filesystemType(int fd) {
        throw new UnsupportedOperationException("macOS has no Linux fstatfs");
    }

    @Override
    public Statx statx(int dirfd, String pathname, int flags) {
        throw new UnsupportedOperationException("macOS has no statx");
    }

    @Override
    public long geteuid() {
        return 501;
    }

    private static AssertionError notListing(String call) {
        return new AssertionError(call + " is not a call of the listing");
    }

    @Override
    public FileStat fstat(int fd) {
        throw notListing("fstat");
    }

    @Override
    public FileStat fstatat(int dirfd, String pathname, int flags) {
        throw notListing("fstatat");
    }

    @Override
    public void mkdirat(int dirfd, String pathname, int mode) {
        throw notListing("mkdirat");
    }

    @Override
    public void fchmod(int fd, int mode) {
        throw notListing("fchmod");
    }

    @Override
    public void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) {
        throw notListing("renameat");
    }

    @Override
    public void unlinkat(int dirfd, String pathname, int flags) {
        throw notListing("unlinkat");
    }

    @Override
    public void fsync(int fd) {
        throw notListing("fsync");
    }

    @Override
    public void flock(int fd, int operation) {
        throw notListing("flock");
    }

    @Override
    public int read(int fd, byte[] buf, int off, int len) {
        throw notListing("read");
    }

    @Override
    public int write(int fd, byte[] buf, int off, int len) {
        throw notListing("write");
    }
}
