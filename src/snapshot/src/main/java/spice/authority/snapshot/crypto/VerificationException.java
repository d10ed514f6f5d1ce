package spice.authority.snapshot.crypto;

/**
 * The single, secret-safe verification failure: unknown scope, unavailable generation, wrong MAC,
 * malformed claim and mismatched records cannot be told apart (wire-format.md c.3). No cause, no
 * detail, no stack trace.
 */
public final class VerificationException extends Exception {
    private static final long serialVersionUID = 1L;
    /** The one message every verification failure carries. */
    public static final String MESSAGE = "snapshot authority verification failed";
    static final VerificationException INSTANCE = new VerificationException();

    private VerificationException() {
        super(MESSAGE, null, false, false);
    }

    /** The shared instance (identical for every failure, by design). */
    public static VerificationException failed() {
        return INSTANCE;
    }
}
