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
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(SessionFilter.class);
    /** The header that names the session of a mutating call. */
    static final String HEADER = "Spice-Session";

    @Inject
    SessionRegistry sessions;

    @Inject
    CallerSession caller;

    @ServerRequestFilter
    @SessionRequired
    public void resolve(ContainerRequestContext request, RoutingContext rc) {
        // The path was already held to PathText's strict decoding (TransportGuard): a segment that
        // is not UTF-8 never reaches this, so the decoded parameter is the text of its bytes.
        String id = request.getUriInfo().getPathParameters().getFirst("session");
        if (id == null) {
            id = request.getHeaderString(HEADER);
        }
        spice.authority.app.session.Session s;
        try {
            s = sessions.require(id, TransportGuard.peerPid(rc));
        } catch (VirtualMachineError e) {
            // Out of memory (or stack) while the session was checked: the method never ran, so the
            // answer is retryable, never the uncertain outcome of a mutating call that failed while it ran.
            // (A dead host's session may have been closed on the way: that is its death's doing,
            // not this call's.) Other Errors are bugs, answered by the fatal mapper.
            LOG.errorf("%s while checking a session; the call was not run", e.getClass().getName());
            throw new spice.authority.app.session.SessionException.Unavailable("the call was not run: checking its session failed ("
                    + e.getClass().getSimpleName() + "); retry");
        }
        caller.resolved(s);
    }
}
