package spice.authority.app.api;

import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
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
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.session.RunLeases;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunRecord;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * HTTP API v1, runs: reading them, and the lease protocol on them ({@link RunLeases}). Every
 * mutating call names its session in {@code Spice-Session}; errors are problem bodies.
 */
@Path("/v1")
@Tag(name = "v1")
public class RunResources {
    private static final String SESSION = SessionFilter.HEADER;
    private static final String PROBLEM = Problems.MEDIA_TYPE;

    @Inject
    RunLeases leases;

    @Inject
    CallerSession caller;

    @Inject
    LargeBodies largeBodies;

    @Inject
    HelperConfig config;

    @Inject
    RunAuthority authority;

    private Dto.RunView view(RunRecord r) {
        return Dto.RunView.of(r, leases.isOwned(new RunId(r.runId())), authority.isFenced(new RunId(r.runId())));
    }

    private static Dto.RunView active(RunLeases.Owned run) {
        return new Dto.RunView(run.runId().value(), RunPhase.ACTIVE.name(), Dto.u64(run.runGeneration()), true);
    }

    @GET
    @Path("/runs")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Every run with a verified record in the authority directory, and every run fenced in this process "
            + "with no record to read (a start whose write is uncertain: ACTIVE at generation 1, fenced)")
    @APIResponse(responseCode = "200", description = "the runs")
    @APIResponse(responseCode = "503", description = "unavailable: the directory or a record cannot be read (never a partial list)",
            content = @Content(mediaType = PROBLEM))
    public List<Dto.RunView> listRuns() throws AuthorityException {
        // Listed through the retained descriptor; an I/O error is 503 unavailable, never a short list.
        RunAuthority a = authority;
        Map<String, RunRecord> byId = new TreeMap<>();
        for (RunRecord r : a.listRecords().records()) {
            byId.put(r.runId(), r);
        }
        // Fenced runs with no record listed (a start whose rename failed) are shown as the write
        // would have left them, fenced: the write may yet be on disk.
        a.fencedWrites().forEach((fid, fr) -> byId.putIfAbsent(fid.value(), fr));
        return byId.values().stream().map(this::view).toList();
    }

    @POST
    @Path("/runs")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Start: durable ACTIVE at generation 1, lease to the session")
    @APIResponse(responseCode = "200", description = "the run")
    @APIResponse(responseCode = "400", description = "invalid_request: " + RunId.RULE, content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "409", description = "busy or state_conflict (the run ID exists)", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "429", description = "busy: the session's lease quota or the helper's descriptor reserve", content = @Content(mediaType = PROBLEM))
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Dto.StartRequest.class)))
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView start(@Context RoutingContext rc) throws AuthorityException {
        Dto.StartRequest req = Dto.StartRequest.read(BodyReader.of(rc), config.maxControlBody());
        if (req == null || req.runId() == null) {
            throw ApiException.invalidRequest("POST /v1/runs needs {\"run_id\": \"...\"}");
        }
        RunId id = Bodies.runId(req.runId()); // SECURITY: before any quota, file or lock: a refused ID creates nothing
        return active(leases.start(caller.get(), id));
    }

    @GET
    @Path("/runs/{run_id}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Phase, run generation and whether a session owns it (plus fenced: true when its last outcome is uncertain); no secrets")
    @APIResponse(responseCode = "200", description = "the run")
    @APIResponse(responseCode = "400", description = "invalid_request: " + RunId.RULE, content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "404", description = "not_found: no record, and not fenced in this process", content = @Content(mediaType = PROBLEM))
    public Dto.RunView get(@Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        RunId id = Bodies.pathRunId(rawRunId);
        // A run fenced with no record to read (its start's rename failed) is shown as the write
        // would have left it, fenced: never "no run", since that write may yet be on disk.
        RunAuthority a = authority;
        Optional<RunRecord> r = a.inspect(id).or(() -> a.fencedWrite(id));
        return view(r.orElseThrow(() -> ApiException.notFound("no run " + id.value())));
    }

    @POST
    @Path("/runs/{run_id}/snapshots")
    @Consumes({Bodies.PAYLOAD, Bodies.PAYLOAD_V1ALPHA3, MediaType.APPLICATION_JSON})
    @Produces({Bodies.PROTOBUF, MediaType.APPLICATION_JSON})
    @Operation(summary = "Validate, sign and persist a v1alpha2 or v1alpha3 payload, in its own format: SUSPENDED (lease kept) or terminal (lease released); "
            + "for a SUSPENDED run, the identical payload gives the identical envelope again to any session of the user")
    @APIResponse(responseCode = "200", description = "the signed SnapshotEnvelope (binary, or JSON mapping with Accept: application/json); "
            + "from a session that does not own the run: the envelope the run is SUSPENDED with, when the payload is identical "
            + "(nothing is written, the owner keeps the run)")
    @APIResponse(responseCode = "400", description = "invalid_request: the path's run ID differs from the payload's, or the "
            + "payload media type names another version than the payload's", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "415", description = "unsupported_format (rule P-VERSION): the payload's version is no snapshot "
            + "format, or one this helper does not sign; the detail names it; nothing was written", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "422", description = "invalid_snapshot with the rule id (P-RUNID: " + RunId.RULE + ")",
            content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "409", description = "state_conflict (a different snapshot, a terminal one from a session that does not own "
            + "the run, or a run that is not SUSPENDED)", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "500", description = "uncertain: the write's outcome is unknown", content = @Content(mediaType = PROBLEM))
    @RequestBody(required = true, content = {@Content(mediaType = Bodies.PAYLOAD), @Content(mediaType = Bodies.PAYLOAD_V1ALPHA3)})
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Response sign(@Context RoutingContext rc, @HeaderParam("Accept") String accept,
                         @HeaderParam("Content-Type") String contentType,
                         @Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        byte[] body = BodyReader.of(rc);
        try (LargeBodies.Permit decoding = largeBodies.enter(body.length)) {
            // The path's ID decoded strictly; the payload's own run_id rule (P-RUNID, 422) comes
            // first, and the path must then name exactly that run.
            return envelopeResponse(signed(body, contentType, PathText.decode(rawRunId)), accept);
        }
    }

    /**
     * The envelope of the payload {@code body} of run {@code runId}. Its own frame: the decoded
     * snapshot (several times the payload's size) is unreachable once it returns, before the
     * answer (the JSON mapping of a large envelope, say) is built.
     */
    private Envelope signed(byte[] body, String contentType, String runId) throws AuthorityException {
        Snapshot snapshot = Bodies.snapshot(body, contentType, authority.formats());
        if (!snapshot.runId().equals(runId)) {
            throw ApiException.invalidRequest("payload run_id differs from the run in the path");
        }
        return leases.sign(caller.get(), snapshot).envelope();
    }

    static Response envelopeResponse(Envelope env, String accept) {
        if (Bodies.wantsJson(accept)) {
            return Response.ok(env.toJsonBytes(), MediaType.APPLICATION_JSON).build();
        }
        return Response.ok(env.toBinary(), Bodies.PROTOBUF).build();
    }

    @POST
    @Path("/runs/{run_id}/resume")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Local resume: durable ACTIVE at the next generation; the earlier envelope never verifies again")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView resume(@Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        return active(leases.resume(caller.get(), Bodies.pathRunId(rawRunId)));
    }

    @DELETE
    @Path("/runs/{run_id}/lease")
    @Operation(summary = "Release the lease (the host stopped); nothing is written")
    @APIResponse(responseCode = "204", description = "released")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Response release(@Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        leases.release(caller.get(), Bodies.pathRunId(rawRunId));
        return Response.noContent().build();
    }

    @POST
    @Path("/runs/{run_id}/abandon")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Operator action: tombstone an ACTIVE, IMPORTING or SUSPENDED orphan (no live owner: no session's lease, "
            + "no import, no other process) as CANCELLED; irreversible")
    @APIResponse(responseCode = "200", description = "the run, now CANCELLED")
    @APIResponse(responseCode = "400", description = "invalid_request: " + RunId.RULE, content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "409", description = "busy (a live owner, also of a SUSPENDED run) or state_conflict (no record, "
            + "or a tombstone already)", content = @Content(mediaType = PROBLEM))
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView abandon(@Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        caller.get(); // SECURITY: fails closed should the session filter ever not have run
        return view(leases.abandon(Bodies.pathRunId(rawRunId)));
    }
}
