package spice.authority.os.posix;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The fake door of the os-posix tests: a {@link Syscalls} that forwards every call to the real C
 * library ({@link Syscalls#LIBC}) and fails the calls it was told to, with a chosen errno, at a
 * chosen occurrence, before the real call or after it. It recognises the calls of
 * {@link PosixSecureDirectory#writeAtomically} and of its listing by what they act on (the
 * temporary file's descriptor, the directory's), so a test names the step, not a call count.
 * Thread-safe.
 */
final class FaultySyscalls implements Syscalls {

    /** A call the directory makes, told apart by what it acts on. */
    enum Call {
        /** {@code openat(O_CREAT)} of a temporary file ({@code .<name>.<hex>.tmp}). */
        CREATE_TEMP,
        /** {@code fchmod} of the temporary file. */
        FCHMOD_TEMP,
        /** {@code write} to the temporary file. */
        WRITE,
        /** {@code fsync} of the temporary file. */
        FSYNC_TEMP,
        /** {@code close} of the temporary file (always made, then failed: close releases the descriptor). */
        CLOSE_TEMP,
        /** {@code renameat}. */
        RENAME,
        /** {@code fsync} of any descriptor that is not a temporary file's: the directory's. */
        FSYNC_DIR,
        /** {@code unlinkat}. */
        UNLINK,
        /** {@code openat(dirfd, ".")}: the listing's own descriptor. */
        OPEN_LISTING,
        /** {@code getdents64}. */
        GETDENTS,
        /** {@code fdopendir} (macOS only: forwarded to the real library, which has it there). */
        FDOPENDIR,
        /** {@code readdir_r} (macOS only). */
        READDIR
    }

    private record Fault(Call call, int errno, int skip, boolean afterCall) {}

    private final Syscalls real = Syscalls.LIBC;
    private final PosixPlatform p = Libc.P;
    private final List<Fault> armed = new ArrayList<>();
    private final Map<Call, Integer> seen = new EnumMap<>(Call.class);
    private final Set<Integer> tempFds = new HashSet<>();
    /** When set, the file-system type every {@link #filesystemType} answers (say, NFS's). */
    private volatile Long filesystemType;
    /** Runs right before a fault fired before its call is thrown (what else happened meanwhile). */
    private volatile Runnable beforeFault = () -> {};

    /** Fails the next {@code call} with {@code errno} (a name such as {@code "ENOSPC"}) before making it. */
    FaultySyscalls fail(Call call, String errno) {
        return fail(call, errno, 0, false);
    }

    /**
     * Fails one {@code call}: the one after {@code skip} more of it, with {@code errno}; with
     * {@code afterCall}, the real call is made first and its result thrown away.
     */
    synchronized FaultySyscalls fail(Call call, String errno, int skip, boolean afterCall) {
        armed.add(new Fault(call, p.errnoValue(errno), seen.getOrDefault(call, 0) + skip, afterCall));
        return this;
    }

    /** Disarms every fault not yet fired. */
    synchronized void clear() {
        armed.clear();
    }

    /** How many calls of this kind were made (failed ones included). */
    synchronized int count(Call call) {
        return seen.getOrDefault(call, 0);
    }

    /** The fault for this occurrence of {@code call}, if armed (and disarms it). */
    private synchronized Fault next(Call call) {
        int n = seen.merge(call, 1, Integer::sum) - 1;
        for (int i = 0; i < armed.size(); i++) {
            Fault f = armed.get(i);
            if (f.call() == call && f.skip() == n) {
                armed.remove(i);
                return f;
            }
        }
        return null;
    }

    private synchronized boolean isTemp(int fd) {
        return tempFds.contains(fd);
    }

    @FunctionalInterface
    private interface Real<T> {
        T run() throws PosixException;
    }

    private <T> T call(Call call, String name, Real<T> realCall) throws PosixException {
        Fault f = call == null ? null : next(call);
        if (f != null && !f.afterCall()) {
            beforeFault.run();
            throw new PosixException(f.errno(), name);
        }
        T result = realCall.run();
        if (f != null) {
            throw new PosixException(f.errno(), name);
        }
        return result;
    }

    @Override
    public int openat(int dirfd, String pathname, int flags, int mode) throws PosixException {
        boolean temp = (flags & p.O_CREAT) != 0 && pathname.startsWith(".") && pathname.endsWith(".tmp");
        Call c = temp ? Call.CREATE_TEMP : pathname.equals(".") ? Call.OPEN_LISTING : null;
        int fd = call(c, "openat", () -> real.openat(dirfd, pathname, flags, mode));
        if (temp) {
            synchronized (this) {
                tempFds.add(fd);
            }
        }
        return fd;
    }

    @Override
    public FileStat fstat(int fd) throws PosixException {
        return real.fstat(fd);
    }

    @Override
    public FileStat fstatat(int dirfd, String pathname, int flags) throws PosixException {
        return real.fstatat(dirfd, pathname, flags);
    }

    @Override
    public void mkdirat(int dirfd, String pathname, int mode) throws PosixException {
        real.mkdirat(dirfd, pathname, mode);
    }

    @Override
    public void fchmod(int fd, int mode) throws PosixException {
        call(isTemp(fd) ? Call.FCHMOD_TEMP : null, "fchmod", () -> {
            real.fchmod(fd, mode);
            return null;
        });
    }

    @Override
    public void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) throws PosixException {
        call(Call.RENAME, "renameat", () -> {
            real.renameat(olddirfd, oldpath, newdirfd, newpath);
            return null;
        });
    }

    @Override
    public void unlinkat(int dirfd, String pathname, int flags) throws PosixException {
        call(Call.UNLINK, "unlinkat", () -> {
            real.unlinkat(dirfd, pathname, flags);
            return null;
        });
    }

    @Override
    public void fsync(int fd) throws PosixException {
        call(isTemp(fd) ? Call.FSYNC_TEMP : Call.FSYNC_DIR, "fsync", () -> {
            real.fsync(fd);
            return null;
        });
    }

    @Override
    public void flock(int fd, int operation) throws PosixException {
        real.flock(fd, operation);
    }

    @Override
    public void close(int fd) throws PosixException {
        boolean temp;
        synchronized (this) {
            temp = tempFds.remove(fd);
        }
        Fault f = temp ? next(Call.CLOSE_TEMP) : null;
        real.close(fd); // always: the kernel releases the descriptor even when close fails
        if (f != null) {
            throw new PosixException(f.errno(), "close");
        }
    }

    @Override
    public int read(int fd, byte[] buf, int off, int len) throws PosixException {
        return real.read(fd, buf, off, len);
    }

    @Override
    public int write(int fd, byte[] buf, int off, int len) throws PosixException {
        return call(isTemp(fd) ? Call.WRITE : null, "write", () -> real.write(fd, buf, off, len));
    }

    /** Runs {@code action} each time a fault armed to fire before its call fires. */
    FaultySyscalls onFault(Runnable action) {
        beforeFault = action;
        return this;
    }

    /**
     * Makes {@link #filesystemType} answer {@code magic} (an {@code f_type} such as NFS's
     * {@code 0x6969}) from now on: set it before the directory is opened, which reads it once.
     */
    FaultySyscalls pretendFilesystem(long magic) {
        filesystemType = magic;
        return this;
    }

    @Override
    public long filesystemType(int fd) throws PosixException {
        Long pretended = filesystemType;
        return pretended != null ? pretended : real.filesystemType(fd);
    }

    @Override
    public Statx statx(int dirfd, String pathname, int flags) throws PosixException {
        return real.statx(dirfd, pathname, flags);
    }

    @Override
    public int getdents64(int fd, byte[] buf) throws PosixException {
        return call(Call.GETDENTS, "getdents64", () -> real.getdents64(fd, buf));
    }

    @Override
    public long fdopendir(int fd) throws PosixException {
        return call(Call.FDOPENDIR, "fdopendir", () -> real.fdopendir(fd));
    }

    @Override
    public boolean readdir_r(long dir, byte[] entry) throws PosixException {
        return call(Call.READDIR, "readdir_r", () -> real.readdir_r(dir, entry));
    }

    @Override
    public void closedir(long dir) throws PosixException {
        real.closedir(dir);
    }

    @Override
    public long geteuid() {
        return real.geteuid();
    }
}
