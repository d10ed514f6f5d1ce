package spice.authority.app.session;

/**
 * A refusal of the session layer: the call names a session, process, run or import that this
 * layer cannot accept, or a quota is reached, or a host's state cannot be established. The HTTP
 * layer turns each kind into its problem response (one mapper); this package knows no HTTP.
 * Messages are one line and never carry secrets or payload content.
 */
public abstract sealed class SessionException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private SessionException(String detail) {
        super(detail, null, false, false);
    }

    /** The session named is unknown or closed (or closed while the call ran). */
    public static final class UnknownSession extends SessionException {
        private static final long serialVersionUID = 1L;

        public UnknownSession(String detail) {
            super(detail);
        }
    }

    /**
     * The calling or declared process may not use or host the session: another process's session,
     * not a live process of this user, not the caller or one of its ancestors.
     */
    public static final class NotHost extends SessionException {
        private static final long serialVersionUID = 1L;

        public NotHost(String detail) {
            super(detail);
        }
    }

    /** The run is not leased by this session (fencing). */
    public static final class NotOwned extends SessionException {
        private static final long serialVersionUID = 1L;

        public NotOwned(String detail) {
            super(detail);
        }
    }

    /** The import named does not exist in this session. */
    public static final class NotFound extends SessionException {
        private static final long serialVersionUID = 1L;

        public NotFound(String detail) {
            super(detail);
        }
    }

    /** A quota is reached; names the setting and its value. */
    public static final class Busy extends SessionException {
        private static final long serialVersionUID = 1L;
        private final String setting;
        private final long value;

        public Busy(String what, String setting, long value) {
            super(what + "; the quota " + setting + " is " + value);
            this.setting = setting;
            this.value = value;
        }

        /** The configuration key of the quota, e.g. {@code spice.authority.fd-reserve}. */
        public String setting() {
            return setting;
        }

        public long value() {
            return value;
        }
    }

    /**
     * Nothing was changed and the call may be retried: a host's liveness cannot be established,
     * its exit cannot be watched, or the helper holds as many sessions as it may.
     */
    public static final class Unavailable extends SessionException {
        private static final long serialVersionUID = 1L;

        public Unavailable(String detail) {
            super(detail);
        }
    }

    /** The request cannot be served as made (no session named, the process is not running). */
    public static final class Invalid extends SessionException {
        private static final long serialVersionUID = 1L;

        public Invalid(String detail) {
            super(detail);
        }
    }
}
