package spice.authority.os.posix;

/**
 * The macOS C calls of the kqueue process watcher and of the peer credentials, behind one small
 * interface like {@link Syscalls}: {@link KqueueProcessWatcher} and {@link DarwinPeer} reach
 * the OS only through the instance they were given. Production code passes {@link #LIBC}, which
 * delegates each call to {@link Libc}; the Linux tests pass a simulated kernel
 * ({@code FakeDarwin}) that also fails chosen calls with a chosen errno, so that no production
 * class carries a test hook.
 *
 * <p><b>Guarantees</b> (of {@link #LIBC}, and expected of every implementation). Each method is
 * the one C call of the same name, with its contract and with structs passed as byte arrays
 * in the layouts of {@link DarwinLayout}: a failure is a stackless {@link PosixException}
 * carrying the errno captured for that call; {@code EINTR} is retried except by {@code close}.
 * Safe for use by several threads.
 *
 * <p>NOT RUN HERE: {@link #LIBC} links only on macOS; on Linux only the fake runs.
 */
interface DarwinSyscalls {

    /** The real C library (macOS). Loads nothing until a method is called. */
    DarwinSyscalls LIBC = new LibcDarwinSyscalls();

    /** {@code int kqueue(void);} returns the new descriptor. */
    int kqueue() throws PosixException;

    /**
     * {@code int kevent(int kq, const struct kevent *changelist, int nchanges, struct kevent
     * *eventlist, int nevents, const struct timespec *timeout);}
     *
     * @param changelist {@code nchanges} encoded {@code struct kevent}s
     * @param eventlist room for {@code nevents} of them, filled in
     * @param timeoutNanos the timeout; negative for none (a NULL timeout: wait without limit)
     * @return the number of events placed in {@code eventlist}
     */
    int kevent(int kq, byte[] changelist, int nchanges, byte[] eventlist, int nevents, long timeoutNanos)
            throws PosixException;

    /**
     * {@code int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buffer, int buffersize);}
     * with {@code buffersize = buffer.length}.
     *
     * @return the number of bytes filled in (the C function's positive return)
     * @throws PosixException when it returns 0 or less, with its errno (ESRCH: no such live process)
     */
    int proc_pidinfo(int pid, int flavor, long arg, byte[] buffer) throws PosixException;

    /**
     * {@code int getsockopt(int socket, int level, int option_name, void *option_value,
     * socklen_t *option_len);} with {@code *option_len = optval.length} on entry.
     *
     * @return the {@code option_len} the call left: the number of bytes filled in
     */
    int getsockopt(int fd, int level, int optname, byte[] optval) throws PosixException;

    /** {@code close(2)}: never retried (see {@link Libc#close}). */
    void close(int fd) throws PosixException;
}
