package spice.authority.os.posix;

import spice.authority.os.SecureDirectory;

/**
 * Not part of the SPI. The bare durable write that the JMH benchmark compares
 * {@link SecureDirectory#writeAtomically} against: the same calls through the same door,
 * without the checks (no destination check, fixed temporary name, no {@code O_EXCL}, no
 * {@code fchmod}, no clean-up). It still takes only plain file names and never follows a symbolic
 * link: public, it must not be a way around the directory's rules.
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
        try {
            spice.authority.os.FileNames.requireValid(d.shownPath(), name);
        } catch (spice.authority.os.DirectoryRefusedException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        PosixPlatform p = Libc.P;
        String temp = "." + name + ".bare.tmp";
        d.enter();
        try {
            int dirfd = d.descriptor();
            int fd = Libc.openat(dirfd, temp, p.O_WRONLY | p.O_CREAT | p.O_TRUNC | p.O_NOFOLLOW | p.O_CLOEXEC, 0600);
            try {
                for (int off = 0; off < data.length; ) {
                    int n = Libc.write(fd, data, off, data.length - off);
                    if (n <= 0) {
                        throw new IllegalStateException("write made no progress");
                    }
                    off += n;
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
