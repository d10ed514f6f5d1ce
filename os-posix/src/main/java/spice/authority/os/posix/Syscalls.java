package spice.authority.os.posix;

/**
 * The C calls the secure directory makes, behind one small interface (as Elasticsearch's
 * {@code PosixCLibrary}): {@link PosixSecureDirectory}, its {@link PathWalk} and its
 * {@link PosixStableLock}s reach the OS only through the instance they were given.
 * Production code passes {@link #LIBC}, which delegates each call to {@link Libc}; tests pass
 * a forwarding fake that fails chosen calls with a chosen errno, so that no production class
 * carries a test hook.
 *
 * <p><b>Guarantees</b> (of {@link #LIBC}, and expected of every implementation). Each method is
 * the one C call of the same name in {@link Libc}, with its contract: a failure is a stackless
 * {@link PosixException} carrying the errno captured for that call, {@code EINTR} is retried
 * except by {@code close} and {@code renameat}, and buffers that may hold key material are zeroed. Safe for use by
 * several threads.
 */
interface Syscalls {

    /** The real C library. */
    Syscalls LIBC = new LibcSyscalls();

    /** {@code openat(2)}; returns the new descriptor. */
    int openat(int dirfd, String pathname, int flags, int mode) throws PosixException;

    /** {@code fstat(2)}. */
    FileStat fstat(int fd) throws PosixException;

    /** {@code fstatat(2)}. */
    FileStat fstatat(int dirfd, String pathname, int flags) throws PosixException;

    /** {@code mkdirat(2)}. */
    void mkdirat(int dirfd, String pathname, int mode) throws PosixException;

    /** {@code fchmod(2)}. */
    void fchmod(int fd, int mode) throws PosixException;

    /** {@code renameat(2)}: never retried, not even on {@code EINTR}. */
    void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) throws PosixException;

    /** {@code unlinkat(2)}. */
    void unlinkat(int dirfd, String pathname, int flags) throws PosixException;

    /**
     * Linux {@code fstatfs(2)}: the {@code f_type} magic number of the file system holding
     * {@code fd}.
     *
     * @throws UnsupportedOperationException where the platform has no Linux {@code statfs}
     */
    long filesystemType(int fd) throws PosixException;

    /**
     * Linux {@code statx(2)}: the status and the mount ID of {@code pathname} relative to
     * {@code dirfd}.
     *
     * @throws UnsupportedOperationException where the platform has no {@code statx}
     */
    Statx statx(int dirfd, String pathname, int flags) throws PosixException;

    /** {@code fsync(2)}. */
    void fsync(int fd) throws PosixException;

    /** {@code flock(2)}. */
    void flock(int fd, int operation) throws PosixException;

    /** {@code close(2)}: never retried (see {@link Libc#close}). */
    void close(int fd) throws PosixException;

    /** {@code read(2)} into {@code buf[off, off+len)}; returns the count, 0 at end of file. */
    int read(int fd, byte[] buf, int off, int len) throws PosixException;

    /** {@code write(2)} from {@code buf[off, off+len)}; returns the count written. */
    int write(int fd, byte[] buf, int off, int len) throws PosixException;

    /**
     * Linux {@code getdents64(2)}: fills {@code buf} with whole {@code struct linux_dirent64}
     * records from the descriptor's current position.
     *
     * @return the number of bytes filled, 0 at the end of the directory
     * @throws UnsupportedOperationException where the platform has no {@code getdents64}
     */
    int getdents64(int fd, byte[] buf) throws PosixException;

    /**
     * macOS {@code fdopendir(3)}: a directory stream over {@code fd}. On success the stream owns
     * {@code fd}: it is closed by {@link #closedir} and must never be passed to {@link #close};
     * on failure, whatever it throws, {@code fd} is still the caller's (a door that made a stream
     * must return it).
     *
     * @return the {@code DIR *}, an opaque non-zero address valid until {@link #closedir}
     * @throws UnsupportedOperationException where the platform has no directory-stream table
     */
    long fdopendir(int fd) throws PosixException;

    /**
     * macOS {@code readdir_r(3)}: copies the stream's next entry into {@code entry}, which holds
     * at least {@code sizeof(struct dirent)} bytes ({@link DarwinLayout#direntSize}). A failure
     * is the error number the function returns (never an {@code errno} left over from an
     * earlier call), so it can never pass for the end of the directory.
     *
     * @return true when an entry was copied, false at the end of the directory
     */
    boolean readdir_r(long dir, byte[] entry) throws PosixException;

    /** macOS {@code closedir(3)}: closes the stream and its descriptor; never retried, like close. */
    void closedir(long dir) throws PosixException;

    /** {@code geteuid(2)}: always succeeds. */
    long geteuid();

    /** Closes {@code fd}, ignoring a reported error: the kernel releases the descriptor anyway. */
    default void closeQuietly(int fd) {
        try {
            close(fd);
        } catch (PosixException ignored) {
            // SECURITY: the descriptor is released by the kernel even when close reports an error.
        }
    }
}
