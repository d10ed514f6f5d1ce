package spice.authority.app.api;

import jakarta.enterprise.context.RequestScoped;
import spice.authority.app.session.Session;

/** The session of the current request, resolved once by {@link SessionFilter}. */
@RequestScoped
public class CallerSession {
    private Session session;

    void resolved(Session s) {
        session = s;
    }

    /**
     * The live session the request named.
     *
     * @throws IllegalStateException when the resource method is not marked {@link SessionRequired}
     *     (a bug: answered as an internal error)
     */
    public Session get() {
        Session s = session;
        if (s == null) {
            throw new IllegalStateException("no session resolved for this request");
        }
        return s;
    }
}
