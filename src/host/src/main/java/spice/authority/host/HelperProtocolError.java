package spice.authority.host;

/** The answer broke HTTP/1.1 framing, a size bound, or the API's documented shape. The request may have been acted on. */
public final class HelperProtocolError extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    /** Also for a layer above the client that checks an answer's content (the engine checks a sign's envelope). */
    public HelperProtocolError(String message) {
        super(message);
    }
}
