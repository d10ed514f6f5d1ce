package spice.authority.app.command;

import spice.authority.host.HelperEndpoint;

/**
 * Where the helper's endpoint files live by default, for {@code serve}: the one rule is
 * {@link HelperEndpoint#defaultDirectory(String, long)}, shared with every client (if they ever
 * disagreed, clients could not find the helper). {@code serve} validates the directory (0700,
 * owned by the user).
 */
public final class EndpointDefaults {
    public static final String SOCKET_NAME = HelperEndpoint.SOCKET_NAME;
    public static final String TOKEN_NAME = HelperEndpoint.TOKEN_NAME;

    private EndpointDefaults() {}

    /** See {@link HelperEndpoint#defaultDirectory(String, long)}. */
    public static String directory(String xdgRuntimeDir, long uid) {
        return HelperEndpoint.defaultDirectory(xdgRuntimeDir, uid);
    }
}
