package spice.authority.app.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.Arrays;

/** Reads input files with a size bound, so oversized input is refused before it is buffered. */
final class BoundedFiles {
    private BoundedFiles() {}

    /** Thrown when the input exceeds the bound; nothing beyond bound+1 bytes was read. */
    static final class TooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        TooLargeException() {
            super("too large", null);
        }
    }

    /**
     * Reads at most {@code max} bytes from {@code name} ("-" = standard input).
     *
     * @throws TooLargeException when more than {@code max} bytes are present
     */
    static byte[] read(String name, int max) throws IOException {
        if (name.equals("-")) {
            return readStream(System.in, max);
        }
        Path p = Path.of(name);
        if (Files.isDirectory(p)) {
            throw new IOException("is a directory");
        }
        try (InputStream in = Files.newInputStream(p)) {
            return readStream(in, max);
        }
    }

    static byte[] readStream(InputStream in, int max) throws IOException {
        byte[] buf = new byte[Math.min(max + 1, 64 * 1024)];
        int len = 0;
        while (true) {
            if (len == buf.length) {
                if (buf.length > max) {
                    throw new TooLargeException();
                }
                buf = Arrays.copyOf(buf, Math.min(max + 1, buf.length * 2));
            }
            int n = in.read(buf, len, buf.length - len);
            if (n < 0) {
                break;
            }
            len += n;
        }
        if (len > max) {
            throw new TooLargeException();
        }
        return Arrays.copyOf(buf, len);
    }

    /** A short, user-facing reason for an I/O failure (no stack trace). */
    static String describe(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
