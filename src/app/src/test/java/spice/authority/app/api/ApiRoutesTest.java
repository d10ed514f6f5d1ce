package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.crypto.EndpointProofMac;

/**
 * Every route of the API v1 in process, through the real HTTP stack, transport guard, session
 * filter and problem mapper, over a real authority ({@link TestServeBeans}): its success answer
 * and the problems it maps, with their status, code and body.
 */
@QuarkusTest
class ApiRoutesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final String PAYLOAD = "application/vnd.spice.snapshot.v1alpha2+json";

    @Inject
    io.quarkus.vertx.http.HttpServer server;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<String> opened = new ArrayList<>();

    /** An answer: status, content type and body. */
    record Answer(int status, String type, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        JsonNode json() throws IOException {
            return JSON.readTree(body);
        }
    }

    private Answer send(String method, String path, String session, String contentType, byte[] body, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getPort() + path))
                .header("Authorization", "Bearer " + TestServeBeans.TOKEN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (session != null) {
            b.header("Spice-Session", session);
        }
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    }

    private Answer post(String path, String session, String json) throws IOException, InterruptedException {
        return send("POST", path, session, "application/json", json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    /** Asserts that {@code a} is the problem {@code status}/{@code code}; returns its detail. */
    private static String problem(Answer a, int status, String code) throws IOException {
        assertThat(a.status()).as(a.text()).isEqualTo(status);
        assertThat(a.type()).startsWith(Problems.MEDIA_TYPE);
        JsonNode p = a.json();
        assertThat(p.path("type").asText()).isEqualTo("urn:spice-authority:problem:" + code);
        assertThat(p.path("code").asText()).isEqualTo(code);
        assertThat(p.path("status").asInt()).isEqualTo(status);
        assertThat(p.path("title").asText()).isNotBlank();
        return p.path("detail").asText();
    }

    private String openSession() throws Exception {
        Answer a = post("/v1/sessions", null, "{\"pid\": " + ProcessHandle.current().pid() + "}");
        assertThat(a.status()).as(a.text()).isEqualTo(200);
        String id = a.json().path("session").asText();
        opened.add(id);
        return id;
    }

    @AfterEach
    void closeSessions() throws Exception {
        for (String s : opened) {
            send("DELETE", "/v1/sessions/" + s, null, null, null);
        }
    }

    private static String newRunId() {
        return "run-q" + RUNS.incrementAndGet() + "-" + Long.toHexString(System.nanoTime());
    }

    private static byte[] payload(String runId, String status, long seq) throws IOException {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        return base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"status\":\"suspended\"", "\"status\":\"" + status + "\"")
                .replace("\"last_sequence\":7", "\"last_sequence\":" + seq)
                .getBytes(StandardCharsets.UTF_8);
    }

    private String start(String session, String runId) throws Exception {
        Answer a = post("/v1/runs", session, "{\"run_id\": \"" + runId + "\"}");
        assertThat(a.status()).as(a.text()).isEqualTo(200);
        return runId;
    }

    /** Signs SUSPENDED at {@code seq}; returns the binary envelope. */
    private byte[] suspend(String session, String runId, long seq) throws Exception {
        Answer a = send("POST", "/v1/runs/" + runId + "/snapshots", session, PAYLOAD, payload(runId, "suspended", seq));
        assertThat(a.status()).as(a.text()).isEqualTo(200);
        assertThat(a.type()).startsWith(Bodies.PROTOBUF);
        return a.body();
    }

    // ---- sessions ---------------------------------------------------------------------------

    @Test
    void sessions_openAndClose_andTheirProblems() throws Exception {
        Answer opened = post("/v1/sessions", null, "{\"pid\": " + ProcessHandle.current().pid() + "}");
        assertThat(opened.status()).isEqualTo(200);
        assertThat(opened.json().path("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
        String id = opened.json().path("session").asText();
        assertThat(id).matches("[0-9a-f]{32}");

        assertThat(send("DELETE", "/v1/sessions/" + id, null, null, null).status()).isEqualTo(204);
        assertThat(problem(send("DELETE", "/v1/sessions/" + id, null, null, null), 401, "unauthorized"))
                .isEqualTo("unknown or closed session");

        assertThat(problem(post("/v1/sessions", null, null), 400, "invalid_request")).contains("needs {\"pid\": N}");
        assertThat(problem(post("/v1/sessions", null, "{\"pid\": 1}"), 401, "unauthorized")).contains("below init");
        problem(post("/v1/sessions", null, "{\"pid\": \"x\"}"), 400, "invalid_request");
    }

    @Test
    void mutatingCall_withoutOrWithAnUnknownSession_isRefusedBeforeTheResource() throws Exception {
        assertThat(problem(post("/v1/runs", null, "{\"run_id\": \"run-x\"}"), 400, "invalid_request")).contains("Spice-Session");
        problem(post("/v1/runs", "0".repeat(32), "{\"run_id\": \"run-x\"}"), 401, "unauthorized");
    }

    // ---- transport, authority, endpoint proof, inspect ----------------------------------------

    @Test
    void authorityView_andAWrongToken() throws Exception {
        Answer a = send("GET", "/v1/authority", null, null, null);
        assertThat(a.status()).isEqualTo(200);
        JsonNode v = a.json();
        assertThat(v.path("state").asText()).isEqualTo("open");
        assertThat(v.path("scope_id").asText()).matches("[0-9a-f]+");
        assertThat(v.toString()).doesNotContain(TestServeBeans.TOKEN);

        HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getPort() + "/v1/authority"))
                .header("Authorization", "Bearer " + "0".repeat(64)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.body()).contains("\"code\":\"unauthorized\"").doesNotContain(TestServeBeans.TOKEN);
    }

    @Test
    void endpointProof_isTheMacOfTheNonceUnderTheToken_andANonceIsRequired() throws Exception {
        byte[] nonce = new byte[32];
        nonce[0] = 7;
        Answer a = send("GET", "/v1/endpoint-proof?nonce=" + HexFormat.of().formatHex(nonce), null, null, null);
        assertThat(a.status()).as(a.text()).isEqualTo(200);
        byte[] want = EndpointProofMac.of(TestServeBeans.TOKEN.getBytes(StandardCharsets.US_ASCII), nonce,
                InetAddress.ofLiteral("127.0.0.1").getAddress(), server.getPort());
        assertThat(a.json().path("proof").asText()).isEqualTo(HexFormat.of().formatHex(want));

        problem(send("GET", "/v1/endpoint-proof", null, null, null), 400, "invalid_request");
        problem(send("GET", "/v1/endpoint-proof?nonce=xyz", null, null, null), 400, "invalid_request");
    }

    @Test
    void inspect_showsAnEnvelope_andRefusesWhatIsNone() throws Exception {
        String s = openSession();
        String run = start(s, newRunId());
        byte[] env = suspend(s, run, 7);

        Answer a = send("POST", "/v1/snapshots/inspect", null, Bodies.PROTOBUF, env);
        assertThat(a.status()).as(a.text()).isEqualTo(200);
        assertThat(a.text()).contains(run);
        problem(send("POST", "/v1/snapshots/inspect", null, Bodies.PROTOBUF, new byte[] {1, 2, 3}), 400, "invalid_request");
        problem(send("POST", "/v1/snapshots/inspect", null, Bodies.PROTOBUF, new byte[0]), 400, "invalid_request");
    }

    // ---- runs -------------------------------------------------------------------------------

    @Test
    void start_get_list_andTheirProblems() throws Exception {
        String s = openSession();
        String run = newRunId();
        Answer started = post("/v1/runs", s, "{\"run_id\": \"" + run + "\"}");
        assertThat(started.status()).isEqualTo(200);
        assertThat(started.text()).isEqualTo("{\"run_id\":\"" + run + "\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":true}");

        assertThat(send("GET", "/v1/runs/" + run, null, null, null).text())
                .isEqualTo("{\"run_id\":\"" + run + "\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":true}");
        Answer list = send("GET", "/v1/runs", null, null, null);
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.text()).contains("\"run_id\":\"" + run + "\"");

        assertThat(problem(post("/v1/runs", s, "{\"run_id\": \"" + "r".repeat(97) + "\"}"), 400, "invalid_request")).isEqualTo(RunId.RULE);
        assertThat(problem(post("/v1/runs", s, "{}"), 400, "invalid_request")).contains("run_id");
        // The run ID exists: its lease is held here (busy) or, released, the record refuses a second start.
        assertThat(send("DELETE", "/v1/runs/" + run + "/lease", s, null, null).status()).isEqualTo(204);
        problem(post("/v1/runs", s, "{\"run_id\": \"" + run + "\"}"), 409, "state_conflict");

        assertThat(problem(send("GET", "/v1/runs/run-never-" + System.nanoTime(), null, null, null), 404, "not_found"))
                .startsWith("no run ");
        assertThat(problem(send("GET", "/v1/runs/" + "r".repeat(97), null, null, null), 400, "invalid_request")).isEqualTo(RunId.RULE);
    }

    @Test
    void sign_suspendedThenResumeThenTerminal_andTheSignProblems() throws Exception {
        String s = openSession();
        String other = openSession();
        String run = start(s, newRunId());

        byte[] env = suspend(s, run, 7);
        assertThat(env).isNotEmpty();
        // The identical payload from a session that does not own the run: the same envelope again.
        Answer again = send("POST", "/v1/runs/" + run + "/snapshots", other, PAYLOAD, payload(run, "suspended", 7));
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.body()).isEqualTo(env);
        Answer asJson = send("POST", "/v1/runs/" + run + "/snapshots", other, PAYLOAD, payload(run, "suspended", 7),
                "Accept", "application/json");
        assertThat(asJson.type()).startsWith("application/json");
        assertThat(asJson.json().isObject()).isTrue();
        // A terminal payload from it: not owned.
        problem(send("POST", "/v1/runs/" + run + "/snapshots", other, PAYLOAD, payload(run, "completed", 8)), 409, "state_conflict");
        problem(post("/v1/runs/" + run + "/resume", other, null), 409, "state_conflict");

        Answer resumed = post("/v1/runs/" + run + "/resume", s, null);
        assertThat(resumed.text()).isEqualTo("{\"run_id\":\"" + run + "\",\"phase\":\"ACTIVE\",\"run_generation\":2,\"owned\":true}");

        problem(send("POST", "/v1/runs/" + run + "/snapshots", s, PAYLOAD, payload("run-other", "suspended", 8)), 400,
                "invalid_request");
        String bad = new String(payload(run, "suspended", 8), StandardCharsets.UTF_8).replace("\"status\":\"suspended\"",
                "\"status\":\"sleeping\"");
        JsonNode invalid = send("POST", "/v1/runs/" + run + "/snapshots", s, PAYLOAD, bad.getBytes(StandardCharsets.UTF_8)).json();
        assertThat(invalid.path("code").asText()).isEqualTo("invalid_snapshot");
        assertThat(invalid.path("status").asInt()).isEqualTo(422);
        assertThat(invalid.path("rule").asText()).isNotBlank();

        Answer done = send("POST", "/v1/runs/" + run + "/snapshots", s, PAYLOAD, payload(run, "completed", 9));
        assertThat(done.status()).as(done.text()).isEqualTo(200);
        // The terminal sign ended the lease.
        assertThat(send("GET", "/v1/runs/" + run, null, null, null).json().path("owned").asBoolean()).isFalse();
        problem(send("DELETE", "/v1/runs/" + run + "/lease", s, null, null), 409, "state_conflict");
    }

    @Test
    void release_andAbandon_andTheirProblems() throws Exception {
        String s = openSession();
        String run = start(s, newRunId());
        assertThat(problem(post("/v1/runs/" + run + "/abandon", s, null), 409, "busy")).isNotBlank();

        assertThat(send("DELETE", "/v1/runs/" + run + "/lease", s, null, null).status()).isEqualTo(204);
        assertThat(problem(send("DELETE", "/v1/runs/" + run + "/lease", s, null, null), 409, "state_conflict"))
                .isEqualTo("run " + run + " is not owned by this session");

        Answer abandoned = post("/v1/runs/" + run + "/abandon", s, null);
        assertThat(abandoned.status()).as(abandoned.text()).isEqualTo(200);
        assertThat(abandoned.json().path("phase").asText()).isEqualTo("CANCELLED");
        assertThat(abandoned.json().path("owned").asBoolean()).isFalse();
        problem(post("/v1/runs/" + run + "/abandon", s, null), 409, "state_conflict");
        problem(post("/v1/runs/" + "r".repeat(97) + "/abandon", s, null), 400, "invalid_request");
    }

    // ---- imports ----------------------------------------------------------------------------

    @Test
    void import_prepareConsumeActivate_andTheImportProblems() throws Exception {
        String first = openSession();
        String second = openSession();
        String run = start(first, newRunId());
        byte[] env = suspend(first, run, 7);
        // Owned by a live session: busy.
        problem(send("POST", "/v1/imports", second, Bodies.PROTOBUF, env), 409, "busy");
        assertThat(send("DELETE", "/v1/runs/" + run + "/lease", first, null, null).status()).isEqualTo(204);

        Answer prepared = send("POST", "/v1/imports", second, Bodies.PROTOBUF, env);
        assertThat(prepared.status()).as(prepared.text()).isEqualTo(200);
        String imp = prepared.json().path("import").asText();
        assertThat(prepared.text()).contains("\"run_id\":\"" + run + "\"");
        // The same session, the identical envelope: the same import.
        assertThat(send("POST", "/v1/imports", second, Bodies.PROTOBUF, env).json().path("import").asText()).isEqualTo(imp);
        // Another session's import is none of this one's.
        problem(post("/v1/imports/" + imp + "/consume", first, null), 404, "not_found");

        Answer consumed = post("/v1/imports/" + imp + "/consume", second, null);
        assertThat(consumed.text()).isEqualTo("{\"run_id\":\"" + run + "\",\"phase\":\"IMPORTING\",\"run_generation\":2,\"owned\":false}");
        Answer active = post("/v1/imports/" + imp + "/activate", second, null);
        assertThat(active.text()).isEqualTo("{\"run_id\":\"" + run + "\",\"phase\":\"ACTIVE\",\"run_generation\":2,\"owned\":true}");
        problem(post("/v1/imports/" + imp + "/activate", second, null), 404, "not_found");

        problem(send("POST", "/v1/imports", second, Bodies.PROTOBUF, new byte[] {9, 9, 9}), 403, "verification_failed");
        problem(send("POST", "/v1/imports", second, Bodies.PROTOBUF, new byte[0]), 400, "invalid_request");
    }

    @Test
    void import_abortedBeforeConsume_leavesTheRunFree() throws Exception {
        String s = openSession();
        String run = start(s, newRunId());
        byte[] env = suspend(s, run, 7);
        assertThat(send("DELETE", "/v1/runs/" + run + "/lease", s, null, null).status()).isEqualTo(204);

        String imp = send("POST", "/v1/imports", s, Bodies.PROTOBUF, env).json().path("import").asText();
        assertThat(send("DELETE", "/v1/imports/" + imp, s, null, null).status()).isEqualTo(204);
        problem(send("DELETE", "/v1/imports/" + imp, s, null, null), 404, "not_found");
        assertThat(send("GET", "/v1/runs/" + run, null, null, null).json().path("phase").asText()).isEqualTo("SUSPENDED");
    }

    // ---- formats ------------------------------------------------------------------------------

    private static byte[] payloadV3(String runId) {
        String base = new String(SpecFiles.bytes("payload-corpus/v1alpha3/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        return base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] replaceOnce(byte[] in, String from, String to) {
        String hex = HexFormat.of().formatHex(in);
        String f = HexFormat.of().formatHex(from.getBytes(StandardCharsets.UTF_8));
        assertThat(hex).contains(f);
        return HexFormat.of().parseHex(hex.replace(f, HexFormat.of().formatHex(to.getBytes(StandardCharsets.UTF_8))));
    }

    @Test
    void formats_v1alpha3SignsAndImportsInItsOwnFormat_beside_v1alpha2() throws Exception {
        String first = openSession();
        String second = openSession();
        String run2 = start(first, newRunId());
        String run3 = start(first, newRunId());
        byte[] env2 = suspend(first, run2, 7);
        Answer signed3 = send("POST", "/v1/runs/" + run3 + "/snapshots", first, Bodies.PAYLOAD_V1ALPHA3, payloadV3(run3));
        assertThat(signed3.status()).as(signed3.text()).isEqualTo(200);
        byte[] env3 = signed3.body();
        assertThat(spice.authority.snapshot.envelope.Envelope.parse(env3).format()).isEqualTo("spice.agent.snapshot/v1alpha3");
        assertThat(spice.authority.snapshot.envelope.Envelope.parse(env2).format()).isEqualTo("spice.agent.snapshot/v1alpha2");
        for (String run : List.of(run2, run3)) {
            assertThat(send("DELETE", "/v1/runs/" + run + "/lease", first, null, null).status()).isEqualTo(204);
        }
        // An envelope whose format string is swapped for the other one is neither's claim.
        problem(send("POST", "/v1/imports", second, Bodies.PROTOBUF,
                replaceOnce(env3, "spice.agent.snapshot/v1alpha3", "spice.agent.snapshot/v1alpha2")), 403, "verification_failed");
        problem(send("POST", "/v1/imports", second, Bodies.PROTOBUF,
                replaceOnce(env2, "spice.agent.snapshot/v1alpha2", "spice.agent.snapshot/v1alpha3")), 403, "verification_failed");
        for (byte[] env : List.of(env2, env3)) {
            Answer prepared = send("POST", "/v1/imports", second, Bodies.PROTOBUF, env);
            assertThat(prepared.status()).as(prepared.text()).isEqualTo(200);
            String imp = prepared.json().path("import").asText();
            assertThat(post("/v1/imports/" + imp + "/consume", second, null).status()).isEqualTo(200);
            assertThat(post("/v1/imports/" + imp + "/activate", second, null).status()).isEqualTo(200);
        }
        JsonNode view = send("GET", "/v1/authority", null, null, null).json();
        assertThat(view.path("formats").path("signing").toString())
                .isEqualTo("[\"spice.agent.snapshot/v1alpha2\",\"spice.agent.snapshot/v1alpha3\"]");
        assertThat(view.path("formats").path("import").size()).isEqualTo(2);
        assertThat(view.path("unreadable_records_by_reason").isObject()).isTrue();
        assertThat(view.path("unreadable_records").asInt()).isZero();
    }

    @Test
    void formats_refusals_nameTheFormatOrTheMediaTypeMismatch() throws Exception {
        String s = openSession();
        String run = start(s, newRunId());
        // A media type of another version than the payload's.
        assertThat(problem(send("POST", "/v1/runs/" + run + "/snapshots", s, Bodies.PAYLOAD_V1ALPHA3, payload(run, "suspended", 7)),
                400, "invalid_request")).contains("v1alpha2").contains(Bodies.PAYLOAD);
        assertThat(problem(send("POST", "/v1/runs/" + run + "/snapshots", s, Bodies.PAYLOAD, payloadV3(run)),
                400, "invalid_request")).contains("v1alpha3");
        // A version that is no format: unsupported_format naming it (rule P-VERSION).
        byte[] v1 = new String(payload(run, "suspended", 7), StandardCharsets.UTF_8)
                .replace("spice.agent.snapshot/v1alpha2", "spice.agent.snapshot/v1alpha1").getBytes(StandardCharsets.UTF_8);
        Answer refused = send("POST", "/v1/runs/" + run + "/snapshots", s, "application/json", v1);
        assertThat(problem(refused, 415, "unsupported_format")).contains("spice.agent.snapshot/v1alpha1");
        assertThat(refused.json().path("rule").asText()).isEqualTo("P-VERSION");
        // An envelope in a format that does not exist: unsupported_format naming it.
        byte[] env = suspend(s, run, 7);
        String other = openSession();
        assertThat(send("DELETE", "/v1/runs/" + run + "/lease", s, null, null).status()).isEqualTo(204);
        assertThat(problem(send("POST", "/v1/imports", other, Bodies.PROTOBUF,
                replaceOnce(env, "spice.agent.snapshot/v1alpha2", "spice.agent.snapshot/v1alpha9")), 415, "unsupported_format"))
                .contains("spice.agent.snapshot/v1alpha9");
        assertThat(send("GET", "/v1/runs/" + run, null, null, null).json().path("phase").asText()).isEqualTo("SUSPENDED");
    }
}
