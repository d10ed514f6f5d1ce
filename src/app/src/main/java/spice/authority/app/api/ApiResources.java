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
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.view.InspectView;
import spice.authority.app.runtime.ServeContext;
import spice.authority.app.session.ImportTx;
import spice.authority.app.session.Session;
import spice.authority.app.session.SessionException;
import spice.authority.app.session.SessionRegistry;
import spice.authority.app.text.LogText;
import spice.authority.app.view.JsonTree;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.core.RunRecord;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The HTTP API v1 (ARCHITECTURE.md): thin translation between HTTP and the run authority. Every
 * mutating call names its session in {@code Spice-Session}; errors are problem bodies.
 */
@Path("/v1")
@Tag(name = "v1")
public class ApiResources {
    private static final Logger LOG = Logger.getLogger(ApiResources.class);
    static final String SESSION = SessionFilter.HEADER;
    private static final String PROBLEM = Problems.MEDIA_TYPE;

    @Inject
    SessionRegistry sessions;

    /** The session a {@link SessionRequired} call named, resolved once by {@link SessionFilter}. */
    @Inject
    CallerSession caller;

    @Inject
    Metrics metrics;

    @Inject
    LargeBodies largeBodies;

    @Inject
    HelperConfig config;

    @Inject
    ServeContext serve;

    @Inject
    io.quarkus.vertx.http.HttpServer server;

    private RunAuthority authority() {
        return serve.authority();
    }

    /** Counts a transition's outcome; never fails (see {@link #countedCall}). */
    private void transition(String kind, String result) {
        countQuietly(r -> metrics.transition(kind, r), result);
    }

    private <T> T counted(String kind, AuthorityCall<T> call) throws AuthorityException {
        return counted(kind, call, t -> t);
    }

    /** {@link #counted} whose result is first recorded by {@code keep} (a lease or import the session now holds). */
    private <T, R> R counted(String kind, AuthorityCall<T> call, Keep<T, R> keep) throws AuthorityException {
        return countedCall(call, keep, result -> metrics.transition(kind, result));
    }

    /**
     * Runs {@code call}, hands a result to {@code keep}, and counts the outcome, in that order: the
     * count comes last and cannot fail the request. A metric that throws (out of memory, say)
     * between a start or an activate and the session recording its lease would leave a lease
     * nobody refers to, its run locked until the helper restarts; and it would turn a refusal's
     * true answer into an unknown outcome.
     */
    static <T, R> R countedCall(AuthorityCall<T> call, Keep<T, R> keep, java.util.function.Consumer<String> count)
            throws AuthorityException {
        T t;
        try {
            t = call.run();
        } catch (AuthorityException e) {
            countQuietly(count, e.code());
            throw e;
        }
        try {
            return keep.apply(t);
        } finally {
            countQuietly(count, "ok"); // the transition took effect, whatever keeping it did
        }
    }

    private static void countQuietly(java.util.function.Consumer<String> count, String result) {
        try {
            count.accept(result);
        } catch (RuntimeException | Error e) {
            // A count is never worth an answer: the metric is short by one, nothing else changes.
        }
    }

    /** Records a call's result in the session (may refuse it: the session closed meanwhile). */
    @FunctionalInterface
    interface Keep<T, R> {
        R apply(T t) throws AuthorityException;
    }

    @FunctionalInterface
    interface AuthorityCall<T> {
        T run() throws AuthorityException;
    }

    /**
     * {@link #counted} for a call on a lease. A lease that another request of the session ended
     * while this one waited (a release, or a terminal sign) refuses the call before it writes
     * anything; that is "not owned any more" ({@code 409 state_conflict}), not "the helper is
     * closing", which stays the answer only while the authority really closes.
     */
    private <T> T onLease(ActiveRun run, String kind, AuthorityCall<T> call) throws AuthorityException {
        try {
            return counted(kind, call);
        } catch (AuthorityException.Closed e) {
            if (run.isClosed() && "open".equals(authority().state())) {
                throw new SessionException.NotOwned("run " + run.runId() + ": its lease ended while this call waited "
                        + "(released, or ended by another request of this session); nothing was written");
            }
            throw e;
        }
    }

    // ---- sessions ---------------------------------------------------------------------------

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
        byte[] body = BodyReader.of(rc);
        Caller from = Caller.of(rc);
        long pid;
        boolean fromCreds;
        if (from.peerPid().isPresent()) {
            Dto.SessionRequest req = Dto.SessionRequest.read(body, config.maxControlBody());
            if (req != null && req.pid() != null) {
                Session s = sessions.openForAncestor(from.peerPid().getAsLong(), req.pid());
                return new Dto.SessionResponse(s.id(), s.pid());
            }
            pid = from.peerPid().getAsLong();
            fromCreds = true;
        } else {
            Dto.SessionRequest req = Dto.SessionRequest.read(body, config.maxControlBody());
            if (req == null || req.pid() == null || req.pid() <= 0) {
                throw ApiException.invalidRequest("on TCP, POST /v1/sessions needs {\"pid\": N} of the calling host process");
            }
            pid = req.pid();
            fromCreds = false;
        }
        Session s = sessions.open(pid, fromCreds);
        return new Dto.SessionResponse(s.id(), s.pid());
    }

    @DELETE
    @Path("/sessions/{session}")
    @Operation(summary = "Close a session; releases its run leases and aborts its imports")
    @APIResponse(responseCode = "204", description = "closed")
    @APIResponse(responseCode = "401", description = "unauthorized: unknown session or another process's", content = @Content(mediaType = PROBLEM))
    @SessionRequired
    public Response closeSession(@PathParam("session") String id) {
        Session s = caller.get();
        sessions.close(s, "closed by its host");
        return Response.noContent().build();
    }

    // ---- endpoint proof ---------------------------------------------------------------------

    /**
     * The TCP endpoint proof ({@link EndpointProof}): answered without the bearer token (the
     * transport guard exempts exactly {@code GET /v1/endpoint-proof}; on Windows the peer-process
     * check still comes first), so a client can check the server before it sends the token. On a
     * Unix socket there is no token and the client proves the server by its peer credentials:
     * {@code 404 not_found}.
     */
    @GET
    @Path("/endpoint-proof")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "TCP only, no token needed: prove this helper holds the bearer token, by an HMAC-SHA256 of the "
            + "client's nonce under the token (the client checks it before it sends the token)")
    @Parameter(name = "nonce", in = ParameterIn.QUERY, required = true, description = EndpointProof.NONCE_RULE,
            schema = @Schema(type = SchemaType.STRING, pattern = "^[0-9a-f]{64}$"))
    @APIResponse(responseCode = "200", description = "{\"proof\": 64 lowercase hex digits}")
    @APIResponse(responseCode = "400", description = "invalid_request: " + EndpointProof.NONCE_RULE + ", given once",
            content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "404", description = "not_found: the helper serves a Unix socket (its peer credentials are the proof)",
            content = @Content(mediaType = PROBLEM))
    public Dto.EndpointProofResponse endpointProof(@Context RoutingContext rc) {
        if (!(serve.endpoint() instanceof ServeContext.Endpoint.Tcp)) {
            throw ApiException.notFound("the endpoint proof is served on TCP only; on a Unix socket the client "
                    + "checks the helper's peer credentials");
        }
        java.util.List<String> nonces = rc.queryParam("nonce");
        if (nonces.size() != 1) {
            throw ApiException.invalidRequest(EndpointProof.NONCE_RULE + ", given once");
        }
        byte[] nonce = EndpointProof.nonce(nonces.get(0));
        // SECURITY: the proof names this helper's end of the connection, so a squatter elsewhere
        // cannot relay a client's nonce here and hand the answer on as its own.
        io.vertx.core.net.SocketAddress local = rc.request().localAddress();
        if (local == null) {
            throw new IllegalStateException("the connection's local address is unknown");
        }
        return new Dto.EndpointProofResponse(EndpointProof.proof(serve.bearerToken(), nonce,
                EndpointProof.local(local.hostAddress()), local.port()));
    }

    // ---- authority --------------------------------------------------------------------------

    @GET
    @Path("/authority")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Scope ID, key generation, state and counts; never secrets")
    @APIResponse(responseCode = "200", description = "the authority view")
    public Dto.AuthorityView authorityView() throws AuthorityException {
        RunAuthority a = authority();
        Map<String, Integer> byPhase = new TreeMap<>();
        int unreadable = 0;
        int owned = 0;
        try {
            spice.authority.core.RecordListing listing = a.listRecords();
            for (RunRecord r : listing.records()) {
                byPhase.merge(r.phase().name(), 1, Integer::sum);
            }
            unreadable = listing.unreadable();
        } catch (AuthorityException.Closed e) {
            // counts unavailable while closing
        }
        for (Session s : sessions.all()) {
            // A fenced run's lease can no longer act on it: not owned, as its run view says.
            owned += (int) s.runIds().stream().filter(id -> !a.isFenced(new RunId(id))).count();
        }
        return new Dto.AuthorityView(a.scopeIdHex(), Dto.u64(a.keyGeneration()), a.state(), a.directory(),
                serve.endpoint().bound(server.getPort()).display(), sessions.all().size(), owned, sessions.importCount(),
                a.outstandingLeases(), byPhase, unreadable);
    }

    // ---- runs -------------------------------------------------------------------------------

    private Dto.RunView view(RunRecord r) {
        return Dto.RunView.of(r, sessions.ownerOf(r.runId()).isPresent(), authority().isFenced(new RunId(r.runId())));
    }

    /** A run ID from a request, or {@code 400 invalid_request} naming the one run-ID rule. */
    private static RunId requireRunId(String text) {
        return RunId.parse(text).orElseThrow(() -> ApiException.invalidRequest(RunId.RULE));
    }

    /**
     * The run ID of a run path, decoded from the raw segment by {@link PathText} (never the HTTP
     * stack's lenient decoding), then held to the one run-ID rule exactly as a body's.
     */
    private static RunId pathRunId(String rawSegment) {
        return requireRunId(PathText.decode(rawSegment));
    }

    @GET
    @Path("/runs")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Every run with a verified record in the authority directory, and every run fenced in this process "
            + "with no record to read (a start whose write is uncertain: ACTIVE at generation 1, fenced)")
    @APIResponse(responseCode = "200", description = "the runs")
    @APIResponse(responseCode = "503", description = "unavailable: the directory or a record cannot be read (never a partial list)",
            content = @Content(mediaType = PROBLEM))
    public java.util.List<Dto.RunView> listRuns() throws AuthorityException {
        // Listed through the retained descriptor; an I/O error is 503 unavailable, never a short list.
        RunAuthority a = authority();
        Map<String, RunRecord> byId = new TreeMap<>();
        for (RunRecord r : a.listRecords().records()) {
            byId.put(r.runId(), r);
        }
        // Fenced runs with no record listed (a start whose rename failed) are shown as the write
        // would have left them, fenced: the write may yet be on disk.
        a.fencedWrites().forEach((id, r) -> byId.putIfAbsent(id.value(), r));
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
        byte[] body = BodyReader.of(rc);
        Session s = caller.get();
        Dto.StartRequest req = Dto.StartRequest.read(body, config.maxControlBody());
        if (req == null || req.runId() == null) {
            throw ApiException.invalidRequest("POST /v1/runs needs {\"run_id\": \"...\"}");
        }
        RunId id = requireRunId(req.runId()); // SECURITY: before any quota, file or lock: a refused ID creates nothing
        ActiveRun run;
        try (SessionRegistry.Admission admitted = sessions.admitLease(s)) {
            run = counted("start", () -> authority().start(id, Cancellation.none()), r -> {
                sessions.own(s, r);
                return r;
            });
        }
        // Plain concatenation, not infof: the lines of every cycle are built without java.util.Formatter
        // (about a quarter of a log line's cost while the request path is still interpreted).
        LOG.info("run " + LogText.of(id.value()) + " started (generation 1)");
        return new Dto.RunView(run.runId(), RunPhase.ACTIVE.name(), Dto.u64(run.runGeneration()), true);
    }

    @GET
    @Path("/runs/{run_id}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Phase, run generation and whether a session owns it (plus fenced: true when its last outcome is uncertain); no secrets")
    @APIResponse(responseCode = "200", description = "the run")
    @APIResponse(responseCode = "400", description = "invalid_request: " + RunId.RULE, content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "404", description = "not_found: no record, and not fenced in this process", content = @Content(mediaType = PROBLEM))
    public Dto.RunView get(@Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        RunId id = pathRunId(rawRunId);
        // A run fenced with no record to read (its start's rename failed) is shown as the write
        // would have left it, fenced: never "no run", since that write may yet be on disk.
        Optional<RunRecord> r = authority().inspect(id).or(() -> authority().fencedWrite(id));
        return view(r.orElseThrow(() -> ApiException.notFound("no run " + id.value())));
    }

    @POST
    @Path("/runs/{run_id}/snapshots")
    @Consumes({Bodies.PAYLOAD, MediaType.APPLICATION_JSON})
    @Produces({Bodies.PROTOBUF, MediaType.APPLICATION_JSON})
    @Operation(summary = "Validate, sign and persist a v1alpha2 payload: SUSPENDED (lease kept) or terminal (lease released); "
            + "for a SUSPENDED run, the identical payload gives the identical envelope again to any session of the user")
    @APIResponse(responseCode = "200", description = "the signed SnapshotEnvelope (binary, or JSON mapping with Accept: application/json); "
            + "from a session that does not own the run: the envelope the run is SUSPENDED with, when the payload is identical "
            + "(nothing is written, the owner keeps the run)")
    @APIResponse(responseCode = "400", description = "invalid_request: the path's run ID differs from the payload's", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "422", description = "invalid_snapshot with the rule id (P-RUNID: " + RunId.RULE + ")",
            content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "409", description = "state_conflict (a different snapshot, a terminal one from a session that does not own "
            + "the run, or a run that is not SUSPENDED)", content = @Content(mediaType = PROBLEM))
    @APIResponse(responseCode = "500", description = "uncertain: the write's outcome is unknown", content = @Content(mediaType = PROBLEM))
    @RequestBody(required = true, content = @Content(mediaType = Bodies.PAYLOAD))
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Response sign(@Context RoutingContext rc, @HeaderParam("Accept") String accept,
                         @Encoded @PathParam("run_id") String rawRunId) throws AuthorityException {
        // The decoded snapshot (several times the payload's size) is gone before the answer is built.
        try (LargeBodies.Permit decoding = largeBodies.enter(BodyReader.of(rc).length)) {
            // The path's ID decoded strictly; the payload's own run_id rule (P-RUNID, 422) comes
            // first, and the path must then name exactly that run.
            return envelopeResponse(signed(rc, PathText.decode(rawRunId)), accept);
        }
    }

    /** The sign itself: the envelope of the payload in {@code rc}'s body (issued again to a session that does not own the run). */
    private Envelope signed(RoutingContext rc, String runId) throws AuthorityException {
        byte[] body = BodyReader.of(rc);
        Session s = caller.get();
        Bodies.requireSize(body, Snapshot.MAX_PAYLOAD_BYTES, "payload");
        Snapshot snapshot;
        try {
            snapshot = Snapshot.decode(body);
        } catch (PayloadRejectedException e) {
            throw new ApiException(422, "invalid_snapshot", e.getMessage(), e.rule().id());
        } catch (OutOfMemoryError e) {
            // Before any lease is touched: what decoding allocated is garbage again, and the
            // caller can know that nothing was written (not the "uncertain" of an Error at large).
            throw new AuthorityException.Unavailable("not enough memory to decode this payload of " + body.length
                    + " bytes now; nothing was written: retry");
        }
        if (!snapshot.runId().equals(runId)) {
            throw ApiException.invalidRequest("payload run_id differs from the run in the path");
        }
        Optional<ActiveRun> lease = sessions.ownedBy(s, runId);
        if (lease.isEmpty()) {
            if (snapshot.status() != LifecycleStatus.SUSPENDED) {
                throw ApiException.notOwned("run " + runId + " is not owned by this session");
            }
            // A lost response is never fatal: the identical payload gives the identical envelope
            // to any session, which neither takes the run nor writes anything.
            Envelope again = counted("reissue", () -> authority().reissue(snapshot));
            LOG.infof("run %s: its SUSPENDED envelope (sequence %s) issued again to a session that does not own it",
                    LogText.of(runId), Long.toUnsignedString(snapshot.lastSequence()));
            return again;
        }
        ActiveRun run = lease.get();
        ActiveRun.Sealed sealed;
        try {
            sealed = onLease(run, snapshot.status().isTerminal() ? "sign_terminal" : "sign_suspended",
                    () -> run.seal(snapshot, Cancellation.none()));
        } finally {
            if (run.isClosed()) {
                // Terminal: the lease ended with the tombstone, even when building the answer failed.
                sessions.forget(s, run);
            }
        }
        LOG.info("run " + LogText.of(runId) + " signed " + snapshot.status().wire() + " at sequence "
                + Long.toUnsignedString(snapshot.lastSequence()));
        return sealed.envelope();
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
    public Dto.RunView resume(@Encoded @PathParam("run_id") String rawRunId)
            throws AuthorityException {
        Session s = caller.get();
        String runId = pathRunId(rawRunId).value();
        ActiveRun run = sessions.leaseOf(s, runId);
        onLease(run, "resume", () -> {
            run.resume(Cancellation.none());
            return null;
        });
        return new Dto.RunView(runId, RunPhase.ACTIVE.name(), Dto.u64(run.runGeneration()), true);
    }

    @DELETE
    @Path("/runs/{run_id}/lease")
    @Operation(summary = "Release the lease (the host stopped); nothing is written")
    @APIResponse(responseCode = "204", description = "released")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Response release(@Encoded @PathParam("run_id") String rawRunId)
            throws AuthorityException {
        Session s = caller.get();
        String runId = pathRunId(rawRunId).value();
        sessions.release(s, sessions.leaseOf(s, runId));
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
    public Dto.RunView abandon(@Encoded @PathParam("run_id") String rawRunId)
            throws AuthorityException {
        caller.get(); // SECURITY: fails closed should the session filter ever not have run
        RunId id = pathRunId(rawRunId);
        String runId = id.value();
        // A live owner (a session here, an import, or another process) holds the run's lock: abandon refuses busy.
        // An owner proven dead whose exit was not handled yet is closed first; an unknown one keeps the run.
        sessions.reapOwnerIfDead(runId);
        RunRecord r = counted("abandon", () -> authority().abandon(id, Cancellation.none()));
        LOG.infof("run %s abandoned by the operator (CANCELLED at generation %s)", LogText.of(runId), Long.toUnsignedString(r.runGeneration()));
        return view(r);
    }

    // ---- imports ----------------------------------------------------------------------------

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
            return prepare(body, contentType);
        }
    }

    private Dto.ImportView prepare(byte[] body, String contentType) throws AuthorityException {
        Session s = caller.get();
        Bodies.requireSize(body, Envelope.MAX_ENCODED_BYTES * 2, "envelope");
        Envelope env;
        try {
            env = Bodies.envelope(contentType, body);
        } catch (EnvelopeRejectedException e) {
            // SECURITY: a body that is not an envelope at all is a verification failure too, with the same body.
            transition("prepare_import", "verification_failed");
            throw new AuthorityException.Verification();
        }
        // The one run-ID rule, before any owner is looked at or anything is locked: an envelope
        // under a wider ID (token(128) passes its structure) was never issued by this project.
        // Structural, like the rule id of a payload: it says nothing about keys or records.
        requireRunId(env.runId());
        // The same session preparing the identical envelope again (its answer to the first prepare
        // was lost) gets the import it already holds, not busy: prepare writes nothing, and the
        // host could otherwise neither go on with it nor abort it until its session ends.
        Optional<ImportTx> again = sessions.preparedImportOf(s, env);
        if (again.isPresent()) {
            transition("prepare_import", "repeated");
            LOG.debug("import of run " + LogText.of(env.runId()) + " prepared again by its session (identical envelope)");
            return importView(again.get().id(), env);
        }
        // An owner proven dead whose exit was not handled yet is closed first (as its exit would
        // have); an alive or unknown owner keeps the run's lock, and the import is busy.
        sessions.reapOwnerIfDead(env.runId());
        ImportTx tx;
        try (SessionRegistry.Admission admitted = sessions.admitImport(s)) {
            tx = counted("prepare_import", () -> authority().prepareImport(env, Cancellation.none()),
                    imp -> sessions.addImport(s, imp, env));
        }
        return importView(tx.id(), env);
    }

    /** The import {@code id} of {@code env}'s run: it goes on at the envelope's sequence + 1. */
    private static Dto.ImportView importView(String id, Envelope env) {
        return new Dto.ImportView(id, env.runId(), Dto.u64(env.lastSequence()), Dto.u64(env.lastSequence() + 1));
    }

    @POST
    @Path("/imports/{import}/consume")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "The consume point: durable IMPORTING")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView consume(@Encoded @PathParam("import") String rawImportId)
            throws AuthorityException {
        Session s = caller.get();
        ImportTx tx = sessions.importOf(s, PathText.decode(rawImportId));
        counted("consume", () -> {
            tx.runImport().consume(Cancellation.none());
            return null;
        });
        // Answer from the known outcome: a re-read could fail after the durable consume succeeded.
        return new Dto.RunView(tx.runId(), RunPhase.IMPORTING.name(), Dto.u64(tx.runImport().sourceGeneration() + 1), false);
    }

    @POST
    @Path("/imports/{import}/activate")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Durable ACTIVE; the run lease now belongs to the session")
    @SessionRequired
    @Parameter(name = SESSION, in = ParameterIn.HEADER, schema = @Schema(type = SchemaType.STRING))
    public Dto.RunView activate(@Encoded @PathParam("import") String rawImportId)
            throws AuthorityException {
        Session s = caller.get();
        ImportTx tx = sessions.importOf(s, PathText.decode(rawImportId));
        ActiveRun run = counted("activate", () -> tx.runImport().activate(Cancellation.none()), r -> {
            try {
                sessions.own(s, r);
            } finally {
                sessions.removeImport(tx); // activated: the import is done whether or not the session kept the lease
            }
            return r;
        });
        LOG.infof("run %s imported and active at generation %s", LogText.of(tx.runId()), Long.toUnsignedString(run.runGeneration()));
        return new Dto.RunView(tx.runId(), RunPhase.ACTIVE.name(), Dto.u64(run.runGeneration()), true);
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
    public Response abort(@Encoded @PathParam("import") String rawImportId)
            throws AuthorityException {
        Session s = caller.get();
        ImportTx tx = sessions.importOf(s, PathText.decode(rawImportId));
        sessions.removeImport(tx);
        tx.runImport().abort();
        return Response.noContent().build();
    }

    // ---- inspect ----------------------------------------------------------------------------

    @POST
    @Path("/snapshots/inspect")
    @Consumes({Bodies.PROTOBUF, MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Structural validation and a JSON view of an envelope (never says it is authentic)")
    @RequestBody(required = true, content = @Content(mediaType = Bodies.PROTOBUF))
    @WritesNothing
    public Response inspect(@Context RoutingContext rc, @HeaderParam("Content-Type") String contentType)
            throws AuthorityException {
        byte[] body = BodyReader.of(rc);
        try (LargeBodies.Permit decoding = largeBodies.enter(body.length)) {
            return inspect(body, contentType);
        }
    }

    private static Response inspect(byte[] body, String contentType) {
        Bodies.requireSize(body, Envelope.MAX_ENCODED_BYTES * 2, "envelope");
        Envelope env;
        boolean json = contentType != null && contentType.startsWith(MediaType.APPLICATION_JSON);
        try {
            env = Bodies.envelope(contentType, body);
        } catch (EnvelopeRejectedException e) {
            throw ApiException.invalidRequest(e.getMessage());
        }
        InspectView.Result v = InspectView.of(env, json ? "protobuf JSON mapping" : "binary protobuf", null);
        return Response.ok(JsonTree.pretty(v.view()), MediaType.APPLICATION_JSON).build();
    }
}
