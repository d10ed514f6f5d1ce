package spice.authority.host;

/** SECURITY: the endpoint is served by another user's process; nothing was sent to it. */
public final class HelperUntrusted extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    HelperUntrusted(String message) {
        super(message);
    }
}
