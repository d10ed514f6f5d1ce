package spice.authority.host;

/** No answer within the timeout once connected. The request may have been received: the outcome of a mutating call is unknown. */
public final class HelperTimeout extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    HelperTimeout(String message) {
        super(message);
    }
}
