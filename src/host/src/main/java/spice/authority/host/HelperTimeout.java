package spice.authority.host;

/** No connection or no answer within the timeout. The request may have been received: the outcome of a mutating call is unknown. */
public final class HelperTimeout extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    HelperTimeout(String message) {
        super(message);
    }
}
