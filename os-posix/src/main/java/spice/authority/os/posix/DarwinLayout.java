package spice.authority.os.posix;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The macOS structures os-posix reads and writes, typed from {@link PosixPlatform#darwinConstants()}:
 * {@code struct kevent}, {@code struct proc_bsdinfo}, {@code struct xucred} and the 64-bit-inode
 * {@code struct dirent}, with their
 * encoders and decoders over plain byte arrays (little-endian: both macOS architectures are).
 * Pure Java: the door ({@link Libc}) copies the bytes to and from native memory, so every
 * decoder here runs in the Linux test suite on bytes a test builds.
 *
 * <p><b>Guarantees.</b> Construction fails unless every field lies inside its struct, is aligned
 * to its size and overlaps no other field, so a wrong table is refused at start-up rather than
 * read as garbage. Decoders fail closed: bytes of the wrong length, an unknown
 * {@code cr_version} or a start time out of range yield {@code null} or {@link #MALFORMED},
 * never a plausible value; a directory entry that is not what {@code readdir_r} copies is an
 * {@link IllegalArgumentException}, never a name.
 *
 * <p>NOT RUN HERE: the offsets are checked against the macOS headers only by
 * {@code native/darwin_probe.c} ({@code DarwinProbeTest}), which needs a Mac.
 */
final class DarwinLayout {

    /** A decoder's answer for bytes that are not what the kernel writes. */
    static final long MALFORMED = -2;

    /** One {@code struct kevent}. {@code flags} and {@code fflags} are unsigned. */
    record KEvent(long ident, short filter, int flags, long fflags, long data, long udata) {}

    /**
     * What {@code proc_pidinfo(PROC_PIDTBSDINFO)} says about a process.
     *
     * @param startTime {@code pbi_start_tvsec * 1_000_000 + pbi_start_tvusec} (microseconds since
     *     the epoch, fixed at fork), or {@link #MALFORMED}
     */
    record BsdInfo(long pid, long ppid, long uid, long ruid, long flags, long status, long startTime) {}

    /** What {@code LOCAL_PEERCRED} says about a socket's peer: its effective uid. */
    record XuCred(long version, long uid, int ngroups) {}

    final int keventSize;
    private final PosixPlatform.Field kIdent;
    private final PosixPlatform.Field kFilter;
    private final PosixPlatform.Field kFlags;
    private final PosixPlatform.Field kFflags;
    private final PosixPlatform.Field kData;
    private final PosixPlatform.Field kUdata;
    final int timespecSize;
    final short EVFILT_PROC;
    final int EV_ADD;
    final int EV_DELETE;
    final int EV_ONESHOT;
    final int EV_RECEIPT;
    final int EV_ERROR;
    final int EV_EOF;
    final long NOTE_EXIT;

    final int bsdinfoSize;
    private final PosixPlatform.Field pbiFlags;
    private final PosixPlatform.Field pbiStatus;
    private final PosixPlatform.Field pbiPid;
    private final PosixPlatform.Field pbiPpid;
    private final PosixPlatform.Field pbiUid;
    private final PosixPlatform.Field pbiRuid;
    private final PosixPlatform.Field pbiStartSec;
    private final PosixPlatform.Field pbiStartUsec;
    final int PROC_PIDTBSDINFO;
    final long PROC_FLAG_INEXIT;
    final long SZOMB;

    final int xucredSize;
    private final PosixPlatform.Field crVersion;
    private final PosixPlatform.Field crUid;
    private final PosixPlatform.Field crNgroups;
    final long XUCRED_VERSION;
    final int SOL_LOCAL;
    final int LOCAL_PEERCRED;
    final int LOCAL_PEERPID;
    final int sizeofPidT;

    /** {@code sizeof(struct dirent)}: the buffer {@code readdir_r} copies one entry into. */
    final int direntSize;
    private final PosixPlatform.Field dIno;
    private final PosixPlatform.Field dSeekoff;
    private final PosixPlatform.Field dReclen;
    private final PosixPlatform.Field dNamlen;
    private final PosixPlatform.Field dType;
    private final PosixPlatform.Field dName;

    private final Map<String, Long> c;

    private DarwinLayout(String platform, Map<String, Long> constants) {
        if (constants.isEmpty()) {
            throw new IllegalStateException("platform table " + platform + " has no kqueue layout (not macOS)");
        }
        this.c = constants;
        keventSize = i("sizeof.struct_kevent");
        kIdent = f("kevent", "ident");
        kFilter = f("kevent", "filter");
        kFlags = f("kevent", "flags");
        kFflags = f("kevent", "fflags");
        kData = f("kevent", "data");
        kUdata = f("kevent", "udata");
        timespecSize = i("sizeof.struct_timespec");
        EVFILT_PROC = (short) i("EVFILT_PROC");
        EV_ADD = i("EV_ADD");
        EV_DELETE = i("EV_DELETE");
        EV_ONESHOT = i("EV_ONESHOT");
        EV_RECEIPT = i("EV_RECEIPT");
        EV_ERROR = i("EV_ERROR");
        EV_EOF = i("EV_EOF");
        NOTE_EXIT = l("NOTE_EXIT");
        bsdinfoSize = i("sizeof.struct_proc_bsdinfo");
        pbiFlags = f("proc_bsdinfo", "pbi_flags");
        pbiStatus = f("proc_bsdinfo", "pbi_status");
        pbiPid = f("proc_bsdinfo", "pbi_pid");
        pbiPpid = f("proc_bsdinfo", "pbi_ppid");
        pbiUid = f("proc_bsdinfo", "pbi_uid");
        pbiRuid = f("proc_bsdinfo", "pbi_ruid");
        pbiStartSec = f("proc_bsdinfo", "pbi_start_tvsec");
        pbiStartUsec = f("proc_bsdinfo", "pbi_start_tvusec");
        PROC_PIDTBSDINFO = i("PROC_PIDTBSDINFO");
        PROC_FLAG_INEXIT = l("PROC_FLAG_INEXIT");
        SZOMB = l("SZOMB");
        xucredSize = i("sizeof.struct_xucred");
        crVersion = f("xucred", "cr_version");
        crUid = f("xucred", "cr_uid");
        crNgroups = f("xucred", "cr_ngroups");
        XUCRED_VERSION = l("XUCRED_VERSION");
        SOL_LOCAL = i("SOL_LOCAL");
        LOCAL_PEERCRED = i("LOCAL_PEERCRED");
        LOCAL_PEERPID = i("LOCAL_PEERPID");
        sizeofPidT = i("sizeof.pid_t");
        direntSize = i("sizeof.struct_dirent");
        dIno = f("dirent", "d_ino");
        dSeekoff = f("dirent", "d_seekoff");
        dReclen = f("dirent", "d_reclen");
        dNamlen = f("dirent", "d_namlen");
        dType = f("dirent", "d_type");
        dName = f("dirent", "d_name");
        check(platform, "kevent", keventSize, kIdent, kFilter, kFlags, kFflags, kData, kUdata);
        check(platform, "proc_bsdinfo", bsdinfoSize, pbiFlags, pbiStatus, pbiPid, pbiPpid, pbiUid, pbiRuid,
                pbiStartSec, pbiStartUsec);
        check(platform, "xucred", xucredSize, crVersion, crUid, crNgroups);
        // d_name is a char array: aligned to 1, checked as its first byte, and it must end inside
        // the struct and leave room for at least one character and its NUL.
        check(platform, "dirent", direntSize, dIno, dSeekoff, dReclen, dNamlen, dType,
                new PosixPlatform.Field(dName.offset(), 1));
        if (dName.offset() + dName.size() > direntSize || dName.size() < 2 || dReclen.size() != 2
                || dNamlen.size() != 2) {
            throw new IllegalStateException("platform table " + platform + ": unexpected struct dirent");
        }
        if (kFilter.size() != 2 || kFlags.size() != 2 || kFflags.size() != 4 || pbiStartSec.size() != 8
                || pbiStartUsec.size() != 8 || sizeofPidT != 4 || crNgroups.size() != 2) {
            throw new IllegalStateException("platform table " + platform + ": unexpected member widths");
        }
    }

    /**
     * The layout of a macOS platform table.
     *
     * @throws IllegalStateException for a table without one (Linux) or an inconsistent one
     */
    static DarwinLayout of(PosixPlatform p) {
        return new DarwinLayout(p.name, p.darwinConstants());
    }

    /** Every field inside the struct, aligned to its size, no two overlapping. */
    private static void check(String platform, String struct, int size, PosixPlatform.Field... fields) {
        List<PosixPlatform.Field> sorted = new ArrayList<>(List.of(fields));
        sorted.sort(Comparator.comparingInt(PosixPlatform.Field::offset));
        int end = 0;
        for (PosixPlatform.Field f : sorted) {
            if (f.offset() < end || f.offset() + f.size() > size || f.offset() % f.size() != 0) {
                throw new IllegalStateException("platform table " + platform + ": struct " + struct
                        + " field at " + f.offset() + " overlaps, is misaligned or lies outside " + size + " bytes");
            }
            end = f.offset() + f.size();
        }
    }

    // ---- struct kevent ----------------------------------------------------------------------

    /** Writes {@code ev} as the {@code index}-th {@code struct kevent} of {@code buf}. */
    void encode(KEvent ev, byte[] buf, int index) {
        ByteBuffer b = le(buf);
        int base = index * keventSize;
        b.putLong(base + kIdent.offset(), ev.ident());
        b.putShort(base + kFilter.offset(), ev.filter());
        b.putShort(base + kFlags.offset(), (short) ev.flags());
        b.putInt(base + kFflags.offset(), (int) ev.fflags());
        b.putLong(base + kData.offset(), ev.data());
        b.putLong(base + kUdata.offset(), ev.udata());
    }

    /** Reads the {@code index}-th {@code struct kevent} of {@code buf}. */
    KEvent decodeKevent(byte[] buf, int index) {
        ByteBuffer b = le(buf);
        int base = index * keventSize;
        return new KEvent(b.getLong(base + kIdent.offset()), b.getShort(base + kFilter.offset()),
                Short.toUnsignedInt(b.getShort(base + kFlags.offset())),
                Integer.toUnsignedLong(b.getInt(base + kFflags.offset())),
                b.getLong(base + kData.offset()), b.getLong(base + kUdata.offset()));
    }

    /** A change for the process {@code pid}'s exit: {@code EVFILT_PROC}, {@code NOTE_EXIT}. */
    KEvent procExit(long pid, int flags) {
        return new KEvent(pid, EVFILT_PROC, flags, NOTE_EXIT, 0, 0);
    }

    // ---- struct proc_bsdinfo ----------------------------------------------------------------

    /**
     * Decodes what {@code proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, buf, size)} filled in.
     *
     * @param filled the function's return value: the number of bytes written
     * @return the decoded info, or null when {@code filled} is not the whole struct (an older
     *     or newer kernel, or a short answer: unknown, never a process)
     */
    BsdInfo decodeBsdInfo(byte[] buf, int filled) {
        if (filled != bsdinfoSize || buf.length < bsdinfoSize) {
            return null;
        }
        ByteBuffer b = le(buf);
        long sec = b.getLong(pbiStartSec.offset());
        long usec = b.getLong(pbiStartUsec.offset());
        // Both are uint64_t: a value with the top bit set is out of range, like usec >= 10^6.
        long start = sec < 0 || sec > Long.MAX_VALUE / 1_000_000 - 1 || usec < 0 || usec >= 1_000_000
                ? MALFORMED : sec * 1_000_000 + usec;
        return new BsdInfo(u32(b, pbiPid), u32(b, pbiPpid), u32(b, pbiUid), u32(b, pbiRuid), u32(b, pbiFlags),
                u32(b, pbiStatus), start);
    }

    /** Whether the process has exited or is on its way out: a zombie, or flagged in exit. */
    boolean exited(BsdInfo info) {
        return info.status() == SZOMB || (info.flags() & PROC_FLAG_INEXIT) != 0;
    }

    // ---- struct xucred ----------------------------------------------------------------------

    /**
     * Decodes what {@code getsockopt(fd, SOL_LOCAL, LOCAL_PEERCRED, buf, &len)} filled in.
     *
     * @param filled the {@code len} the call returned
     * @return the credentials, or null unless the whole struct was filled and its
     *     {@code cr_version} is {@code XUCRED_VERSION} (another layout: refused, never guessed)
     */
    XuCred decodeXucred(byte[] buf, int filled) {
        if (filled != xucredSize || buf.length < xucredSize) {
            return null;
        }
        ByteBuffer b = le(buf);
        long version = u32(b, crVersion);
        if (version != XUCRED_VERSION) {
            return null;
        }
        return new XuCred(version, u32(b, crUid), b.getShort(crNgroups.offset()));
    }

    /** Decodes a {@code pid_t} that {@code getsockopt(LOCAL_PEERPID)} filled in, or {@link #MALFORMED}. */
    long decodePid(byte[] buf, int filled) {
        if (filled != sizeofPidT || buf.length < sizeofPidT) {
            return MALFORMED;
        }
        int pid = le(buf).getInt(0);
        return pid > 0 ? pid : MALFORMED;
    }

    // ---- struct dirent (64-bit inodes) -------------------------------------------------------

    /**
     * Decodes the name of the one {@code struct dirent} that {@code readdir_r} copied into
     * {@code entry} (which copies the header and the name with its NUL, not always the whole
     * struct). {@code .} and {@code ..} are returned like any name. A name that is not valid
     * UTF-8 is decoded with U+FFFD in place of the bad bytes, so it can never equal a valid file
     * name (those are ASCII).
     *
     * <p>SECURITY: fails closed. {@code d_namlen} must be 1 to {@code MAXPATHLEN - 1}, the name
     * must hold no NUL and end with one at {@code d_name[d_namlen]}, and {@code d_reclen} must
     * cover the header and the name with its NUL and lie within the struct, as every record the
     * kernel's {@code getdirentries64} writes does. Anything else (a short buffer, another
     * layout such as the 32-bit-inode one) is not guessed at: the listing must fail rather than
     * come back with a wrong or missing name.
     *
     * @throws IllegalArgumentException if the bytes are not such an entry; the message gives the
     *     rule, never the bytes
     */
    String decodeDirent(byte[] entry) {
        if (entry.length < direntSize) {
            throw new IllegalArgumentException("directory entry truncated: " + entry.length + " of "
                    + direntSize + " bytes");
        }
        ByteBuffer b = le(entry);
        int reclen = Short.toUnsignedInt(b.getShort(dReclen.offset()));
        int namlen = Short.toUnsignedInt(b.getShort(dNamlen.offset()));
        if (namlen == 0 || namlen > dName.size() - 1) {
            throw new IllegalArgumentException("directory entry has name length " + namlen);
        }
        if (reclen < dName.offset() + namlen + 1 || reclen > direntSize) {
            throw new IllegalArgumentException("directory entry has length " + reclen + " for a name of " + namlen);
        }
        int start = dName.offset();
        if (entry[start + namlen] != 0) {
            throw new IllegalArgumentException("directory entry name is not terminated at its length");
        }
        for (int k = start; k < start + namlen; k++) {
            if (entry[k] == 0) {
                throw new IllegalArgumentException("directory entry name holds a NUL before its length");
            }
        }
        return new String(entry, start, namlen, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static long u32(ByteBuffer b, PosixPlatform.Field f) {
        return Integer.toUnsignedLong(b.getInt(f.offset()));
    }

    private static ByteBuffer le(byte[] buf) {
        return ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
    }

    private long l(String key) {
        Long v = c.get(key);
        if (v == null) {
            throw new IllegalStateException("darwin table lacks " + key);
        }
        return v;
    }

    private int i(String key) {
        return Math.toIntExact(l(key));
    }

    private PosixPlatform.Field f(String struct, String member) {
        return new PosixPlatform.Field(i("offsetof." + struct + "." + member), i("sizeof." + struct + "." + member));
    }

    @Override
    public String toString() {
        return "DarwinLayout" + Objects.hash(c);
    }
}
