package spice.authority.app.api;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;
import spice.authority.app.session.SessionException;
import spice.authority.core.AuthorityException;
import spice.authority.snapshot.contract.ProblemCode;

/**
 * The one place where refusals become problem answers: the typed failures of the resources (the
 * mappers here) and the refusals of the transport layer before any resource runs
 * ({@link TransportGuard}, {@link BodyReader}), which answer through {@link #refuse}.
 *
 * <p><b>Guarantees.</b> Every refusal made here is counted once in
 * {@code spice_authority_refusals_total{code}}, whichever layer refused.
 */
@Singleton
public class ProblemMappers {
    private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

    @Inject
    Metrics metrics;

    /** A refusal as it is answered: status, stable code, one-line detail, and the rule (or null). */
    public record Problem(int status, ProblemCode code, String detail, String rule) {
        /** The RFC 9457 body. */
        public String body() {
            return Problems.body(status, code, detail, rule);
        }
    }

    /** Counts a refusal and returns its answer: the path of every problem, mapped or written by the transport. */
    Problem refuse(int status, ProblemCode code, String detail, String rule) {
        metrics.refusal(code.wire());
        return new Problem(status, code, detail, rule);
    }

    private Response problem(int status, ProblemCode code, String detail, String rule) {
        Problem p = refuse(status, code, detail, rule);
        return Response.status(p.status()).type(Problems.MEDIA_TYPE).entity(p.body()).build();
    }

    @ServerExceptionMapper
    public Response authority(AuthorityException e) {
        return problem(Problems.status(e), e.problem(), e.getMessage(), null);
    }

    @ServerExceptionMapper
    public Response api(ApiException e) {
        return problem(e.status(), e.code(), e.getMessage(), e.rule());
    }

    /** Session refusals: the same statuses, codes and details as the API's own refusals of that kind. */
    @ServerExceptionMapper
    public Response session(SessionException e) {
        return switch (e) {
            case SessionException.UnknownSession u -> problem(401, ProblemCode.UNAUTHORIZED, e.getMessage(), null);
            case SessionException.NotHost n -> problem(401, ProblemCode.UNAUTHORIZED, e.getMessage(), null);
            case SessionException.NotOwned n -> problem(409, ProblemCode.STATE_CONFLICT, e.getMessage(), null);
            case SessionException.NotFound n -> problem(404, ProblemCode.NOT_FOUND, e.getMessage(), null);
            case SessionException.Busy b -> problem(429, ProblemCode.BUSY, e.getMessage(), null);
            case SessionException.Unavailable u -> problem(503, ProblemCode.UNAVAILABLE, e.getMessage(), null);
            case SessionException.Invalid i -> problem(400, ProblemCode.INVALID_REQUEST, e.getMessage(), null);
        };
    }

    @ServerExceptionMapper
    public Response web(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        ProblemCode code = status == 404 ? ProblemCode.NOT_FOUND : status == 413 ? ProblemCode.INVALID_REQUEST : status == 401 ? ProblemCode.UNAUTHORIZED : ProblemCode.INVALID_REQUEST;
        String detail = switch (status) {
            case 404 -> "no such resource";
            case 405 -> "method not allowed";
            case 406 -> "cannot produce the requested media type";
            case 413 -> "request body too large";
            case 415 -> "unsupported media type";
            default -> "invalid request";
        };
        return problem(status, code, detail, null);
    }

    /**
     * Any other failure: a bug. Never echo internals: the log names the type (no message, which
     * could carry content), and the answer is honest about what the caller can know, as for an
     * {@link Error}.
     */
    @ServerExceptionMapper
    public Response unexpected(RuntimeException e, jakarta.ws.rs.core.Request request, ResourceInfo resource) {
        return fatalProblem(e, request.getMethod(), writesNothing(resource));
    }

    /**
     * An {@link Error} (out of memory, stack overflow) while a request ran: answered as a problem,
     * and the helper keeps serving. A durable write that the error interrupted has already fenced
     * its run and answered {@code uncertain} in the authority; an error elsewhere in a mutating
     * call still leaves the caller unable to tell whether the call took effect, so it is
     * {@code uncertain} too; a read, or a call that writes nothing durable on any path
     * ({@link WritesNothing}), is {@code unavailable}.
     */
    @ServerExceptionMapper
    public Response fatal(Error e, jakarta.ws.rs.core.Request request, ResourceInfo resource) {
        return fatalProblem(e, request.getMethod(), writesNothing(resource));
    }

    private static boolean writesNothing(ResourceInfo resource) {
        java.lang.reflect.Method m = resource == null ? null : resource.getResourceMethod();
        return m != null && m.isAnnotationPresent(WritesNothing.class);
    }

    Response fatalProblem(Throwable e, String method, boolean nothingWritten) {
        LOG.errorf("unexpected %s in request handling; the helper goes on serving", e.getClass().getName());
        InternalError p = InternalError.of(method, e.getClass().getSimpleName(), nothingWritten);
        Response r = problem(p.status(), p.code(), p.detail(), null);
        return p.status() == 503 ? Response.fromResponse(r).header("Retry-After", "1").build() : r;
    }

    /**
     * What an internal failure answers: a read changed nothing ({@code 503 unavailable}, retry);
     * after a mutating call the caller cannot tell whether it took effect ({@code 500 uncertain}).
     * The one rule for the resources' mappers and the router's failure handler.
     */
    record InternalError(int status, ProblemCode code, String detail) {
        /**
         * @param nothingWritten the call is known to have written nothing durable (it never does,
         *     or it failed before reaching any resource)
         */
        static InternalError of(String method, String what, boolean nothingWritten) {
            String cause = what == null ? "internal error" : "internal error (" + what + ")";
            return isRead(method) || nothingWritten
                    ? new InternalError(503, ProblemCode.UNAVAILABLE, cause + (isRead(method) ? "; nothing was changed, retry"
                            : "; nothing durable was written, retry"))
                    : new InternalError(500, ProblemCode.UNCERTAIN, cause
                            + " while the call ran; whether it took effect is unknown: read the run's state before anything else");
        }
    }

    static boolean isRead(String method) {
        return "GET".equals(method) || "HEAD".equals(method) || "OPTIONS".equals(method);
    }
}
