package spice.authority.snapshot.envelope;

/**
 * The single, opaque signing failure of envelope construction (wire-format.md a.4): a signer
 * error, a signer that threw, or a malformed claim. No cause is attached.
 */
public final class SigningException extends Exception {
    private static final long serialVersionUID = 1L;
    public static final String MESSAGE = "snapshot authority signing failed";

    public SigningException() {
        super(MESSAGE, null, false, false);
    }
}
