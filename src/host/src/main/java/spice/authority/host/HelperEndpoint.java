package spice.authority.host;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where the helper listens: its Unix socket, or loopback TCP with the bearer token in a file.
 *
 * <p>Guarantees: an endpoint holds no secret (the token file is named, never read here), so it can
 * be printed; a {@link Tcp} endpoint is loopback only.
 */
public sealed interface HelperEndpoint permits HelperEndpoint.Unix, HelperEndpoint.Tcp {
    /** As the helper prints it: {@code unix:PATH} or {@code http://HOST:PORT}. */
    String display();

    /** A Unix domain socket. */
    record Unix(Path socket) implements HelperEndpoint {
        public Unix {
            Objects.requireNonNull(socket, "socket");
        }

        @Override
        public String display() {
            return "unix:" + socket;
        }
    }

    /** Loopback TCP with the bearer token in {@code tokenFile}. */
    record Tcp(InetAddress address, int port, Path tokenFile) implements HelperEndpoint {
        public Tcp {
            Objects.requireNonNull(address, "address");
            Objects.requireNonNull(tokenFile, "tokenFile");
            // SECURITY: the bearer token is only ever sent to this machine.
            if (!address.isLoopbackAddress()) {
                throw new IllegalArgumentException("only loopback addresses (127.0.0.0/8, ::1) are allowed");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range");
            }
        }

        @Override
        public String display() {
            String host = address.getHostAddress();
            return "http://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /**
     * The helper's default socket for this user: {@code $XDG_RUNTIME_DIR/spice-agent/authority.sock}
     * when {@code XDG_RUNTIME_DIR} is an absolute path, else {@code /tmp/spice-agent-<uid>/authority.sock}
     * ({@code /private/tmp/...} on macOS).
     *
     * @throws IllegalStateException when neither is known
     */
    static Unix defaultSocket() {
        String dir = defaultDirectory(System.getenv("XDG_RUNTIME_DIR"), Users.ownUid());
        if (dir == null) {
            throw new IllegalStateException("cannot determine the user id for the default endpoint");
        }
        return new Unix(Path.of(dir, SOCKET_NAME));
    }

    /** File name of the socket in the endpoint directory. */
    String SOCKET_NAME = "authority.sock";
    /** File name of the bearer token in the endpoint directory. */
    String TOKEN_NAME = "token";

    /**
     * The one rule for where the helper's endpoint files live by default, shared by {@code serve}
     * and every client (if they ever disagreed, clients could not find the helper).
     *
     * @param xdgRuntimeDir the value of {@code XDG_RUNTIME_DIR}, or null
     * @param uid the user's uid; negative when unknown
     * @return the directory, or null when it depends on an unknown uid
     */
    static String defaultDirectory(String xdgRuntimeDir, long uid) {
        return defaultDirectory(xdgRuntimeDir, uid, System.getProperty("os.name", "").startsWith("Mac"));
    }

    /**
     * {@link #defaultDirectory(String, long)} for a given platform. On macOS {@code /tmp} is a
     * symbolic link to {@code /private/tmp}, and the helper walks its endpoint directory without
     * following any link, so the default there names {@code /private/tmp} itself.
     */
    static String defaultDirectory(String xdgRuntimeDir, long uid, boolean macOs) {
        if (xdgRuntimeDir != null && xdgRuntimeDir.startsWith("/") && !xdgRuntimeDir.endsWith("/")) {
            return xdgRuntimeDir + "/spice-agent";
        }
        return uid < 0 ? null : (macOs ? "/private/tmp/spice-agent-" : "/tmp/spice-agent-") + uid;
    }

    /**
     * The helper's default loopback port on Windows, where it serves TCP with the bearer token
     * instead of a Unix socket (on {@code 127.0.0.1}).
     */
    int WINDOWS_PORT = 47878;

    /**
     * The one rule for the endpoint directory on Windows, shared by {@code serve} and every client:
     * {@code %LOCALAPPDATA%\spice-agent\endpoint} (apart from the authority directory
     * {@code %LOCALAPPDATA%\spice-agent\authority}).
     *
     * @param localAppData the value of {@code LOCALAPPDATA}, or null
     * @return the directory, or null when {@code LOCALAPPDATA} is not an absolute drive path
     */
    static String windowsDirectory(String localAppData) {
        String base = localAppData;
        while (base != null && base.length() > 3 && base.endsWith("\\")) {
            base = base.substring(0, base.length() - 1);
        }
        if (base == null || base.length() < 3 || !Character.isLetter(base.charAt(0)) || base.charAt(0) > 'z'
                || base.charAt(1) != ':' || base.charAt(2) != '\\' || base.indexOf('/') >= 0) {
            return null;
        }
        return base + (base.endsWith("\\") ? "" : "\\") + "spice-agent\\endpoint";
    }
}
