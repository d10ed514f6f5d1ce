package spice.authority.app.cli;

/**
 * The one rule for where the helper's endpoint files live by default, shared by {@code serve} and
 * the commands that talk to it (if the two ever disagreed, clients could not find the helper):
 * {@code $XDG_RUNTIME_DIR/spice-agent} when that is set to an absolute path, else
 * {@code /tmp/spice-agent-<uid>}. {@code serve} validates the directory (0700, owned by the user).
 */
public final class EndpointDefaults {
    public static final String SOCKET_NAME = "authority.sock";
    public static final String TOKEN_NAME = "token";

    private EndpointDefaults() {}

    /**
     * @param xdgRuntimeDir the value of {@code XDG_RUNTIME_DIR}, or null
     * @param uid the user's uid; negative when unknown
     * @return the directory, or null when it depends on an unknown uid
     */
    public static String directory(String xdgRuntimeDir, long uid) {
        if (xdgRuntimeDir != null && xdgRuntimeDir.startsWith("/") && !xdgRuntimeDir.endsWith("/")) {
            return xdgRuntimeDir + "/spice-agent";
        }
        return uid < 0 ? null : "/tmp/spice-agent-" + uid;
    }
}
