package spice.authority.snapshot.json;

/**
 * The input is not syntactically valid JSON (Go's {@code SyntaxError}), or nests deeper than Go's
 * limit of 10,000 levels. Stackless: it is thrown for untrusted input on a hot path.
 */
public final class JsonSyntaxException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int offset;

    public JsonSyntaxException(String message, int offset) {
        super(message, null, false, false);
        this.offset = offset;
    }

    /** Byte offset of the offending byte (or of the end of input). */
    public int offset() {
        return offset;
    }
}
