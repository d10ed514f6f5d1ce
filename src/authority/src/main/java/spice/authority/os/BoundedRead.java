package spice.authority.os;

import java.util.Arrays;
import java.util.function.Supplier;

/**
 * Reads a file to its end through a platform's read call, never holding more than the limit:
 * the bounded read behind every {@link SecureDirectory#read} implementation.
 *
 * <p><b>Guarantees.</b> The size is only a hint (a file may change while it is read): the buffer
 * grows up to {@code maxBytes + 1}, and more than {@code maxBytes} bytes is the caller's
 * too-large refusal, never a truncated answer. SECURITY: every buffer it outgrows or leaves is
 * zeroed, on every path (files read here may hold key material); only the returned copy remains.
 */
public final class BoundedRead {
    /** One read call: up to {@code len} bytes into {@code buf} at {@code off}; 0 at the end. */
    @FunctionalInterface
    public interface Source<E extends Exception> {
        int read(byte[] buf, int off, int len) throws E;
    }

    private BoundedRead() {}

    /**
     * The whole content, read in chunks of at most {@code chunk} bytes.
     *
     * @param sizeHint the size the file had when opened
     * @throws X from {@code tooLarge} when the content exceeds {@code maxBytes}
     */
    public static <E extends Exception, X extends Exception> byte[] readAll(Source<E> source, long sizeHint, int maxBytes,
                                                                           int chunk, Supplier<X> tooLarge) throws E, X {
        byte[] buf = new byte[(int) Math.min(maxBytes, Math.max(0, sizeHint)) + 1];
        int total = 0;
        try {
            while (true) {
                if (total == buf.length) {
                    if (total > maxBytes) {
                        throw tooLarge.get();
                    }
                    byte[] grown = Arrays.copyOf(buf, (int) Math.min((long) maxBytes + 1, 2L * buf.length));
                    Arrays.fill(buf, (byte) 0);
                    buf = grown;
                }
                int n = source.read(buf, total, Math.min(chunk, buf.length - total));
                if (n == 0) {
                    break;
                }
                total += n;
            }
            if (total > maxBytes) {
                throw tooLarge.get();
            }
            return Arrays.copyOf(buf, total);
        } finally {
            Arrays.fill(buf, (byte) 0);
        }
    }
}
