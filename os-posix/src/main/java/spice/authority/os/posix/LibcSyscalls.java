package spice.authority.os.posix;

/** The production {@link Syscalls}: every call goes straight to {@link Libc}. Stateless. */
final class LibcSyscalls implements Syscalls {

    LibcSyscalls() {}

    @Override
    public int openat(int dirfd, String pathname, int flags, int mode) throws PosixException {
        return Libc.openat(dirfd, pathname, flags, mode);
    }

    @Override
    public FileStat fstat(int fd) throws PosixException {
        return Libc.fstat(fd);
    }

    @Override
    public FileStat fstatat(int dirfd, String pathname, int flags) throws PosixException {
        return Libc.fstatat(dirfd, pathname, flags);
    }

    @Override
    public void mkdirat(int dirfd, String pathname, int mode) throws PosixException {
        Libc.mkdirat(dirfd, pathname, mode);
    }

    @Override
    public void fchmod(int fd, int mode) throws PosixException {
        Libc.fchmod(fd, mode);
    }

    @Override
    public void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) throws PosixException {
        Libc.renameat(olddirfd, oldpath, newdirfd, newpath);
    }

    @Override
    public void unlinkat(int dirfd, String pathname, int flags) throws PosixException {
        Libc.unlinkat(dirfd, pathname, flags);
    }

    @Override
    public void fsync(int fd) throws PosixException {
        Libc.fsync(fd);
    }

    @Override
    public void flock(int fd, int operation) throws PosixException {
        Libc.flock(fd, operation);
    }

    @Override
    public void close(int fd) throws PosixException {
        Libc.close(fd);
    }

    @Override
    public int read(int fd, byte[] buf, int off, int len) throws PosixException {
        return Libc.read(fd, buf, off, len);
    }

    @Override
    public int write(int fd, byte[] buf, int off, int len) throws PosixException {
        return Libc.write(fd, buf, off, len);
    }

    @Override
    public long filesystemType(int fd) throws PosixException {
        return Libc.filesystemType(fd);
    }

    @Override
    public Statx statx(int dirfd, String pathname, int flags) throws PosixException {
        return Libc.statx(dirfd, pathname, flags);
    }

    @Override
    public int getdents64(int fd, byte[] buf) throws PosixException {
        return Libc.getdents64(fd, buf);
    }

    @Override
    public long fdopendir(int fd) throws PosixException {
        return Libc.fdopendir(fd);
    }

    @Override
    public boolean readdir_r(long dir, byte[] entry) throws PosixException {
        return Libc.readdir_r(dir, entry);
    }

    @Override
    public void closedir(long dir) throws PosixException {
        Libc.closedir(dir);
    }

    @Override
    public long geteuid() {
        return Libc.geteuid();
    }

    @Override
    public String toString() {
        return "Syscalls.LIBC";
    }
}
