package spice.authority.app.command;

import spice.authority.host.HelperEndpoint;

/**
 * Where the helper's endpoint files live by default, for {@code serve}: the one rule is
 * {@link HelperEndpoint#defaultDirectory(String, long)}, shared with every client (if they ever
 * disagreed, clients could not find the helper). {@code serve} validates the directory (0700,
 * owned by the user; on Windows the DACL rules of the authority directory).
 *
 * <p>Linux and macOS serve a Unix socket by default. Windows serves loopback TCP with the bearer
 * token on {@link #WINDOWS_LISTEN}, the token in {@link #windowsDirectory(String)}: the helper's
 * HTTP stack has no Unix-socket transport there.
 */
public final class EndpointDefaults {
    public static final String SOCKET_NAME = HelperEndpoint.SOCKET_NAME;
    public static final String TOKEN_NAME = HelperEndpoint.TOKEN_NAME;

    private EndpointDefaults() {}

    /** See {@link HelperEndpoint#defaultDirectory(String, long)}. */
    public static String directory(String xdgRuntimeDir, long uid) {
        return HelperEndpoint.defaultDirectory(xdgRuntimeDir, uid);
    }

    /** The default {@code --listen} on Windows. */
    public static final String WINDOWS_LISTEN = "127.0.0.1:" + HelperEndpoint.WINDOWS_PORT;

    /** Whether the default endpoint on {@code osName} is a Unix socket (false on Windows: loopback TCP). */
    public static boolean unixSocketByDefault(String osName) {
        return osName == null || !osName.startsWith("Windows");
    }

    /** See {@link HelperEndpoint#windowsDirectory(String)}. */
    public static String windowsDirectory(String localAppData) {
        return HelperEndpoint.windowsDirectory(localAppData);
    }
}
