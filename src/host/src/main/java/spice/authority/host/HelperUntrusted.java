package spice.authority.host;

/**
 * SECURITY: the endpoint is not proven to be the helper: on a socket it is served by another
 * user's process; on TCP its server did not answer the endpoint proof for the token. Neither the
 * token nor the request was sent to it.
 */
public final class HelperUntrusted extends HelperTransportException {
    private static final long serialVersionUID = 1L;

    HelperUntrusted(String message) {
        super(message);
    }
}
