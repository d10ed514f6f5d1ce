package spice.authority.host;

import java.io.IOException;

/**
 * The helper could not be talked to, or its answer was not HTTP the client can read. Distinct from
 * a {@link HelperProblem}, which is the helper's own refusal.
 *
 * <p>Guarantees: messages name the endpoint and what failed, never a token, a session id or a
 * body.
 */
public abstract sealed class HelperTransportException extends IOException
        permits HelperUnreachable, HelperTimeout, HelperProtocolError, HelperUntrusted, HelperInterrupted {
    private static final long serialVersionUID = 1L;

    HelperTransportException(String message) {
        super(message, null);
    }
}
