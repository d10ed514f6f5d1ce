package spice.authority.app.api;

import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import jakarta.ws.rs.container.ContainerRequestContext;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import spice.authority.app.session.SessionRegistry;

/**
 * Resolves the session of every {@link SessionRequired} call once, before the resource method
 * runs: the {@code Spice-Session} header, or the {@code {session}} path parameter of the session
 * resource itself. A refusal ({@code SessionException}) is answered by the one problem mapper and
 * the method never runs.
 *
 * <p>It runs where the method runs (a worker thread: the liveness checks read {@code /proc}).
 */
public class SessionFilter {
    /** The header that names the session of a mutating call. */
    static final String HEADER = "Spice-Session";

    @Inject
    SessionRegistry sessions;

    @Inject
    CallerSession caller;

    @ServerRequestFilter
    @SessionRequired
    public void resolve(ContainerRequestContext request, RoutingContext rc) {
        String id = request.getUriInfo().getPathParameters().getFirst("session");
        if (id == null) {
            id = request.getHeaderString(HEADER);
        }
        spice.authority.app.session.Session s;
        try {
            s = sessions.require(id, TransportGuard.peerPid(rc));
        } catch (Error e) {
            // The method never ran: the call was refused before it could change anything, so the
            // answer is retryable, never the "uncertain" of a mutating call that failed while it ran.
            throw new spice.authority.app.session.SessionException.Unavailable("the call was not run: checking its session failed ("
                    + e.getClass().getSimpleName() + "); retry");
        }
        caller.resolved(s);
    }
}
