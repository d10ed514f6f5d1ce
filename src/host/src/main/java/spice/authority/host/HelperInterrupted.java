package spice.authority.host;

/**
 * The calling thread was interrupted before this attempt sent anything: while reading the token,
 * connecting, proving the endpoint, or waiting to repeat a call whose last answer proved that
 * nothing happened. The outcome is known (nothing was done by it), so it is never taken for an
 * uncertain one; the call is not repeated, and the thread's interrupt status is kept.
 *
 * <p>An interrupt after the request's first byte was written is a plain
 * {@link java.io.InterruptedIOException} instead: the helper may have received it, so its
 * outcome is unknown.
 */
public final class HelperInterrupted extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    HelperInterrupted(String message) {
        super(message);
    }
}
