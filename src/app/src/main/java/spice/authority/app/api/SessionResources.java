package spice.authority.app.api;

import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.session.Session;
import spice.authority.app.session.SessionRegistry;

/** HTTP API v1, sessions: a host opens one for its process and closes it (or its exit does). */
@Path("/v1")
@Tag(name = "v1")
public class SessionResources {
    private static final String PROBLEM = Problems.MEDIA_TYPE;

    @Inject
    SessionRegistry sessions;

    /** The session a {@link SessionRequired} call named, resolved once by {@link SessionFilter}. */
    @Inject
    CallerSession caller;

    @Inject
    HelperConfig config;

    @POST
    @Path("/sessions")
    @Consumes(MediaType.WILDCARD)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Open a session for the calling host process")
    @APIResponse(responseCode = "200", description = "{\"session\": id}")
    @APIResponse(responseCode = "400", description = "invalid_request: pid missing (TCP) or process not running",
            content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "401", description = "unauthorized: another user's process", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "429", description = "busy: the process has its quota of sessions", content = @Content(mediaType = PROBLEM))
    @RequestBody(required = false, content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Dto.SessionRequest.class)))
    @WritesNothing
    public Dto.SessionResponse openSession(@Context RoutingContext rc) {
        Dto.SessionRequest req = Dto.SessionRequest.read(BodyReader.of(rc), config.maxControlBody());
        Caller from = Caller.of(rc);
        Session s;
        if (from.peerPid().isPresent()) {
            // On a socket the caller is its peer credentials' process, or a declared ancestor of it.
            s = req != null && req.pid() != null ? sessions.openForAncestor(from.peerPid().getAsLong(), req.pid())
                    : sessions.open(from.peerPid().getAsLong(), true);
        } else {
            if (req == null || req.pid() == null || req.pid() <= 0) {
                throw ApiException.invalidRequest("on TCP, POST /v1/sessions needs {\"pid\": N} of the calling host process");
            }
            s = sessions.open(req.pid(), false);
        }
        return new Dto.SessionResponse(s.id(), s.pid());
    }

    @DELETE
    @Path("/sessions/{session}")
    @Operation(summary = "Close a session; releases its run leases and aborts its imports")
    @APIResponse(responseCode = "204", description = "closed")
    @APIResponse(responseCode = "401", description = "unauthorized: unknown session or another process's", content = @Content(mediaType = PROBLEM))
    @SessionRequired
    public Response closeSession(@PathParam("session") String id) {
        sessions.close(caller.get(), "closed by its host");
        return Response.noContent().build();
    }
}
