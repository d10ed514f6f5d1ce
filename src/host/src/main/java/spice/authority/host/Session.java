package spice.authority.host;

import java.util.Objects;

/**
 * An open session of this host process with the helper. Mutating calls name it; the helper closes
 * it (releasing its leases) when the process exits or {@link AuthorityClient#closeSession} is called.
 *
 * <p>Guarantees: SECURITY: the session id is a bearer secret for the process's leases; it is never
 * in {@link #toString()}, in an exception message of this library, or reachable outside this
 * package. Two sessions are equal only when they are the same object.
 */
public final class Session {
    private final String id;
    private final long pid;

    Session(String id, long pid) {
        this.id = Objects.requireNonNull(id, "id");
        this.pid = pid;
    }

    String id() {
        return id;
    }

    /** The host process the helper bound this session to. */
    public long pid() {
        return pid;
    }

    @Override
    public String toString() {
        return "Session[pid=" + pid + "]";
    }
}
