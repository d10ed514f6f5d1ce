package spice.authority.os.posix;

import spice.authority.os.SecureDirectory;

/**
 * Not part of the SPI. The bare durable write that the JMH benchmark compares
 * {@link SecureDirectory#writeAtomically} against: the same calls through the same door,
 * without the checks (no destination check, fixed temporary name, no {@code O_EXCL}, no
 * {@code fchmod}, no clean-up).
 */
public final class PosixBenchmarkSupport {

    private PosixBenchmarkSupport() {}

    /**
     * {@code openat(O_WRONLY|O_CREAT|O_TRUNC)}, {@code write}, {@code fsync}, {@code close},
     * {@code renameat}, {@code fsync(dir)}.
     *
     * @param directory a directory from {@link PosixSecureDirectoryProvider}
     * @throws IllegalStateException if a call fails
     */
    public static void bareDurableWrite(SecureDirectory directory, String name, byte[] data) {
        PosixSecureDirectory d = (PosixSecureDirectory) directory;
        PosixPlatform p = Libc.P;
        String temp = "." + name + ".bare.tmp";
        d.enter();
        try {
            int dirfd = d.descriptor();
            int fd = Libc.openat(dirfd, temp, p.O_WRONLY | p.O_CREAT | p.O_TRUNC | p.O_CLOEXEC, 0600);
            try {
                for (int off = 0; off < data.length; ) {
                    off += Libc.write(fd, data, off, data.length - off);
                }
                Libc.fsync(fd);
            } finally {
                Libc.close(fd);
            }
            Libc.renameat(dirfd, temp, dirfd, name);
            Libc.fsync(dirfd);
        } catch (PosixException e) {
            throw new IllegalStateException(e.getMessage());
        } finally {
            d.exit();
        }
    }
}
