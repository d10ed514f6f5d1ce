package spice.authority.host;

/**
 * Nothing serves the endpoint (the socket or token file is missing, the connection was refused,
 * or none was made within the connect timeout): nothing was sent, so a retry is always safe.
 */
public final class HelperUnreachable extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    public HelperUnreachable(String message) {
        super(message);
    }
}
