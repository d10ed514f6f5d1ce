package spice.authority.os.posix;

/**
 * The production {@link DarwinSyscalls}: every call goes straight to {@link Libc}. Stateless.
 *
 * <p>NOT RUN HERE: the macOS symbols ({@code kqueue}, {@code kevent}, {@code proc_pidinfo}) do
 * not all exist on Linux; nothing calls this class there.
 */
final class LibcDarwinSyscalls implements DarwinSyscalls {

    LibcDarwinSyscalls() {}

    @Override
    public int kqueue() throws PosixException {
        return Libc.kqueue();
    }

    @Override
    public int kevent(int kq, byte[] changelist, int nchanges, byte[] eventlist, int nevents, long timeoutNanos)
            throws PosixException {
        return Libc.kevent(kq, changelist, nchanges, eventlist, nevents, timeoutNanos);
    }

    @Override
    public int proc_pidinfo(int pid, int flavor, long arg, byte[] buffer) throws PosixException {
        return Libc.proc_pidinfo(pid, flavor, arg, buffer);
    }

    @Override
    public int getsockopt(int fd, int level, int optname, byte[] optval) throws PosixException {
        return Libc.getsockopt(fd, level, optname, optval);
    }

    @Override
    public void close(int fd) throws PosixException {
        Libc.close(fd);
    }

    @Override
    public String toString() {
        return "DarwinSyscalls.LIBC";
    }
}
