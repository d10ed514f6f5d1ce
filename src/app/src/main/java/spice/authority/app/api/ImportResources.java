package spice.authority.app.api;

import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.app.session.RunLeases;
import spice.authority.core.AuthorityException;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;

/** HTTP API v1, imports: prepare, consume, activate or abort, each through {@link RunLeases}. */
@Path("/v1")
@Tag(name = "v1")
public class ImportResources {
    private static final String SESSION = SessionFilter.HEADER;
    private static final String PROBLEM = Problems.MEDIA_TYPE;

    @Inject
    RunLeases leases;

    @Inject
    CallerSession caller;

    @Inject
    LargeBodies largeBodies;

    @POST
    @Path("/imports")
    @Consumes({Bodies.PROTOBUF, MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Prepare an import: verify the envelope against the signed record, then lock the run")
    @APIResponse(responseCode = "200", description = "the import transaction (consume, then activate, or DELETE to abort); "
            + "the same session preparing the identical envelope again, before consume, gets the same import")
    @APIResponse(responseCode = "400", description = "invalid_request: the envelope's " + RunId.RULE, content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "403", description = "verification_failed (one identical body for every authenticity failure)",
            content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "409", description = "busy: the owner is alive", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "415", description = "unsupported_format: the envelope's format (or the run record's) is no "
            + "snapshot format, or one this helper does not import; the detail names it; nothing was written",
            content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "429", description = "busy: the session's import or lease quota, or the helper's descriptor reserve",
            content = @Content(mediaType = PROBLEM))
    @RequestBody(required = true, content = @Content(mediaType = Bodies.PROTOBUF))
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    @WritesNothing
    public Dto.ImportView prepare(@Context RoutingContext rc,
                                  @HeaderParam("Content-Type") String contentType) throws AuthorityException {
        byte[] body = BodyReader.of(rc);
        try (LargeBodies.Permit decoding = largeBodies.enter(body.length)) {
            RunLeases.Prepared p = leases.prepareImport(caller.get(), Bodies.importedEnvelope(contentType, body));
            // The import goes on at the envelope's sequence + 1.
            Envelope env = p.envelope();
            return new Dto.ImportView(p.importId(), env.runId(), Dto.u64(env.lastSequence()), Dto.u64(env.lastSequence() + 1));
        }
    }

    @POST
    @Path("/imports/{import}/consume")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "The consume point: durable IMPORTING")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView consume(@Encoded @PathParam("import") String rawImportId) throws AuthorityException {
        RunLeases.Consumed c = leases.consume(caller.get(), PathText.decode(rawImportId));
        return new Dto.RunView(c.runId().value(), RunPhase.IMPORTING.name(), Dto.u64(c.runGeneration()), false);
    }

    @POST
    @Path("/imports/{import}/activate")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Durable ACTIVE; the run lease now belongs to the session")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView activate(@Encoded @PathParam("import") String rawImportId) throws AuthorityException {
        RunLeases.Owned run = leases.activate(caller.get(), PathText.decode(rawImportId));
        return new Dto.RunView(run.runId().value(), RunPhase.ACTIVE.name(), Dto.u64(run.runGeneration()), true);
    }

    @DELETE
    @Path("/imports/{import}")
    @Operation(summary = "Abort: clean before consume; after consume the run stays IMPORTING and this answers uncertain")
    @APIResponse(responseCode = "204", description = "aborted cleanly")
    @APIResponse(responseCode = "409", description = "state_conflict: the import was already activated (the run is ACTIVE and "
            + "this session holds its lease); nothing was aborted", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "500", description = "uncertain: aborted after the consume point", content = @Content(mediaType = PROBLEM))
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Response abort(@Encoded @PathParam("import") String rawImportId) throws AuthorityException {
        leases.abort(caller.get(), PathText.decode(rawImportId));
        return Response.noContent().build();
    }
}
