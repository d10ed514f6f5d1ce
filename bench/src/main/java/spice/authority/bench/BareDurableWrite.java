package spice.authority.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileNames;
import spice.authority.os.SecureDirectory;

/**
 * The bare durable write that the benchmarks compare {@link SecureDirectory#writeAtomically}
 * against: the same system calls in the same order ({@code open(O_WRONLY|O_CREAT|O_TRUNC)},
 * {@code write}, {@code fsync}, {@code close}, {@code rename}, {@code fsync} of the directory)
 * made through the JDK's own {@code java.nio}, by path, without any of the checks (no destination
 * check, a fixed temporary name, no {@code O_EXCL}, no {@code fchmod}, no clean-up). Like the
 * retained descriptor of the directory, the directory's channel for the final flush is opened
 * once.
 *
 * <p>Benchmark code only (it used to live in os-posix as {@code PosixBenchmarkSupport}, which
 * had to reach into the directory's descriptor): it takes plain file names and never follows a
 * symbolic link at the file it writes.
 */
final class BareDurableWrite implements AutoCloseable {

    private final Path dir;
    private final FileChannel dirChannel;

    /** @param directory a bound directory; its path is used as it was configured */
    BareDurableWrite(SecureDirectory directory) {
        this(Path.of(directory.path()));
    }

    /** @param dir an existing directory, used by path */
    BareDurableWrite(Path dir) {
        this.dir = dir;
        try {
            this.dirChannel = FileChannel.open(dir, StandardOpenOption.READ);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes {@code data} durably under {@code name}.
     *
     * @throws IllegalArgumentException for a name that {@link FileNames} refuses
     * @throws UncheckedIOException if a call fails
     */
    void write(String name, byte[] data) {
        try {
            FileNames.requireValid(dir.toString(), name);
        } catch (DirectoryRefusedException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        Path temp = dir.resolve("." + name + ".bare.tmp");
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer b = ByteBuffer.wrap(data);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            Files.move(temp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
            dirChannel.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            dirChannel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
