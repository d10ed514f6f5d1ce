package spice.authority.app.api;

import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
import spice.authority.app.runtime.BearerToken;
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.session.RunLeases;
import spice.authority.app.view.InspectView;
import spice.authority.app.view.JsonTree;
import spice.authority.core.AuthorityException;
import spice.authority.core.RecordListing;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunRecord;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.envelope.Envelope;

/** HTTP API v1 about the helper itself: the authority view, the TCP endpoint proof, inspecting an envelope. */
@Path("/v1")
@Tag(name = "v1")
public class AuthorityResources {
    private static final String PROBLEM = Problems.MEDIA_TYPE;

    @Inject
    RunLeases leases;

    @Inject
    LargeBodies largeBodies;

    @Inject
    RunAuthority authority;

    @Inject
    Endpoint endpoint;

    /** The token of a TCP endpoint, the key of the proof; null on a Unix socket. */
    @Inject
    BearerToken bearerToken;

    @Inject
    io.quarkus.vertx.http.HttpServer server;

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
        if (!(endpoint instanceof Endpoint.Tcp)) {
            throw ApiException.notFound("the endpoint proof is served on TCP only; on a Unix socket the client "
                    + "checks the helper's peer credentials");
        }
        List<String> nonces = rc.queryParam("nonce");
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
        return new Dto.EndpointProofResponse(EndpointProof.proof(bearerToken, nonce,
                EndpointProof.local(local.hostAddress()), local.port()));
    }

    @GET
    @Path("/authority")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Scope ID, key generation, state, counts (records by phase, unreadable records by reason) and the "
            + "snapshot formats accepted for signing, verification and import; never secrets")
    @APIResponse(responseCode = "200", description = "the authority view")
    public Dto.AuthorityView authorityView() throws AuthorityException {
        RunAuthority a = authority;
        Map<String, Integer> byPhase = new TreeMap<>();
        Map<String, Integer> byReason = new TreeMap<>();
        int unreadable = 0;
        try {
            RecordListing listing = a.listRecords();
            for (RunRecord r : listing.records()) {
                byPhase.merge(r.phase().name(), 1, Integer::sum);
            }
            unreadable = listing.unreadable();
            listing.unreadableByReason().forEach((reason, n) -> byReason.put(reason.wire(), n));
        } catch (AuthorityException.Closed e) {
            // counts unavailable while closing
        }
        RunLeases.Holdings held = leases.holdings();
        return new Dto.AuthorityView(a.scopeIdHex(), Dto.u64(a.keyGeneration()), a.state(), a.directory(),
                endpoint.bound(server.getPort()).display(), held.sessions(), held.ownedRuns(), held.imports(),
                a.outstandingLeases(), byPhase, unreadable, byReason, formats(a.formats()));
    }

    /** The wire strings accepted for each use, in format order: what this helper takes. */
    static Map<String, List<String>> formats(FormatPolicy policy) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        out.put("signing", wires(policy.signing()));
        out.put("verification", wires(policy.verification()));
        out.put("import", wires(policy.importing()));
        return out;
    }

    private static List<String> wires(Set<SnapshotFormat> formats) {
        return java.util.Arrays.stream(SnapshotFormat.values()).filter(formats::contains).map(SnapshotFormat::wire).toList();
    }

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
            Envelope env = Bodies.inspectedEnvelope(contentType, body);
            boolean json = contentType != null && contentType.startsWith(MediaType.APPLICATION_JSON);
            InspectView.Result v = InspectView.of(env, json ? "protobuf JSON mapping" : "binary protobuf", null);
            return Response.ok(JsonTree.pretty(v.view()), MediaType.APPLICATION_JSON).build();
        }
    }
}
