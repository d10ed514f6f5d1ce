package spice.authority.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;

/**
 * The typed client of the helper's HTTP API v1 (RFC 0007's run authority), for Java hosts and the
 * CLI: sessions, runs, snapshots, imports. One request per connection, on the helper's Unix socket
 * or loopback TCP with its bearer token (there preceded, on the same connection, by the endpoint
 * proof).
 *
 * <pre>{@code
 * AuthorityClient client = AuthorityClient.onDefaultSocket();
 * Session session = client.openSession();
 * client.start(session, "run-1");
 * byte[] envelope = client.sign(session, "run-1", payload);
 * client.release(session, "run-1");
 * }</pre>
 *
 * <p>Guarantees:
 * <ul>
 *   <li>A refusal is a {@link HelperProblem} subtype per stable code; no connection, a timeout,
 *       an unreadable answer or an untrusted endpoint is a {@link HelperTransportException}.
 *   <li>SECURITY: on a socket nothing is sent before the listening process is proven to be this
 *       user's; on TCP the token goes only to a loopback address, and only on a connection whose
 *       server has just answered the endpoint proof ({@code GET /v1/endpoint-proof}: an HMAC of a
 *       fresh random nonce under the token); a server that does not is a {@link HelperUntrusted},
 *       and neither the token nor the request was sent to it.
 *   <li>A call is repeated only when the answer proves nothing happened ({@link RetryPolicy}):
 *       never on {@code uncertain}, never after a request may have arrived without an answer.
 *   <li>SECURITY: no message or {@code toString} of this library shows a session id or a token.
 *   <li>Run IDs that break the one run-ID rule are refused here, before anything is sent.
 * </ul>
 * Thread-safe: it holds no connection between calls.
 */
public final class AuthorityClient {
    /** Default connect and read timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    /** The header that names the session on mutating calls. */
    static final String SESSION = "Spice-Session";
    static final String JSON = "application/json";
    static final String PROTOBUF = "application/x-protobuf";
    static final String PAYLOAD = "application/vnd.spice.snapshot.v1alpha2+json";
    static final String PAYLOAD_V1ALPHA3 = "application/vnd.spice.snapshot.v1alpha3+json";
    static final String PROBLEM = "application/problem+json";

    private final HttpTransport http;
    private final RetryPolicy retry;

    private AuthorityClient(Builder b) {
        this.http = new HttpTransport(b.endpoint, b.tokenReader, b.serverCheck, b.userAgent, b.connectTimeout, b.readTimeout);
        this.retry = b.retry;
    }

    /** A client of the helper at {@code endpoint}, to be configured. */
    public static Builder builder(HelperEndpoint endpoint) {
        return new Builder(endpoint);
    }

    /**
     * A client of the helper on this user's default socket ({@code $XDG_RUNTIME_DIR/spice-agent/authority.sock},
     * else {@code /tmp/spice-agent-<uid>/authority.sock}) with {@link RetryPolicy#DEFAULT}.
     */
    public static AuthorityClient onDefaultSocket() {
        return builder(HelperEndpoint.defaultSocket()).build();
    }

    /** Options of a client; {@link #build()} makes it. */
    public static final class Builder {
        private final HelperEndpoint endpoint;
        private TokenReader tokenReader = TokenReader.ownerOnly();
        private TcpServerCheck serverCheck = TcpServerCheck.none();
        private RetryPolicy retry = RetryPolicy.DEFAULT;
        private Duration connectTimeout = DEFAULT_TIMEOUT;
        private Duration readTimeout = DEFAULT_TIMEOUT;
        private String userAgent = "spice-authority-host";

        private Builder(HelperEndpoint endpoint) {
            this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        }

        /** How the bearer token file is read on TCP; default {@link TokenReader#ownerOnly()}. */
        public Builder tokenReader(TokenReader reader) {
            this.tokenReader = Objects.requireNonNull(reader, "reader");
            return this;
        }

        /**
         * On TCP, how the listener is proven to run as this user before the token is sent; default
         * {@link TcpServerCheck#none()} (the token alone).
         */
        public Builder tcpServerCheck(TcpServerCheck check) {
            this.serverCheck = Objects.requireNonNull(check, "check");
            return this;
        }

        public Builder retry(RetryPolicy policy) {
            this.retry = Objects.requireNonNull(policy, "policy");
            return this;
        }

        public Builder timeouts(Duration connect, Duration read) {
            this.connectTimeout = Objects.requireNonNull(connect, "connect");
            this.readTimeout = Objects.requireNonNull(read, "read");
            return this;
        }

        /** The {@code User-Agent} header: a token such as {@code my-host/1.2}. */
        public Builder userAgent(String agent) {
            if (agent == null || agent.isEmpty() || !agent.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
                throw new IllegalArgumentException("user agent must be visible ASCII without spaces");
            }
            this.userAgent = agent;
            return this;
        }

        public AuthorityClient build() {
            return new AuthorityClient(this);
        }
    }

    public HelperEndpoint endpoint() {
        return http.endpoint();
    }

    @Override
    public String toString() {
        return "AuthorityClient[" + http.endpoint().display() + "]";
    }

    // ---- sessions -----------------------------------------------------------------------------

    /** {@code POST /v1/sessions}: a session bound to this process. */
    public Session openSession() throws IOException {
        long pid = ProcessHandle.current().pid();
        byte[] body = ("{\"pid\":" + pid + "}").getBytes(StandardCharsets.UTF_8);
        Map<String, Object> o = object(call("POST", "/v1/sessions", null, JSON, JSON, body));
        if (!(o.get("session") instanceof String id) || id.isEmpty() || !visibleAscii(id)) {
            throw unexpected("no session");
        }
        return new Session(id, o.get("pid") instanceof Long p ? p : pid);
    }

    /** {@code DELETE /v1/sessions/{session}}: closes it; the helper releases its leases and imports. */
    public void closeSession(Session session) throws IOException {
        call("DELETE", "/v1/sessions/" + HttpTransport.segment(session.id()), session, null, JSON, null);
    }

    // ---- authority and runs -------------------------------------------------------------------

    /** {@code GET /v1/authority}. */
    public AuthorityView authority() throws IOException {
        return authorityWithJson().value();
    }

    /** {@code GET /v1/authority}, with the helper's document as it is. */
    public WithJson<AuthorityView> authorityWithJson() throws IOException {
        byte[] body = call("GET", "/v1/authority", null, null, JSON, null);
        Map<String, Object> a = object(body);
        Map<String, Long> byPhase = new LinkedHashMap<>();
        if (!(a.get("runs_by_phase") instanceof Map<?, ?> m)) {
            throw unexpected("not an authority view");
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getValue() instanceof Long n)) {
                throw unexpected("not an authority view");
            }
            byPhase.put((String) e.getKey(), n);
        }
        try {
            AuthorityView v = new AuthorityView(str(a, "scope_id"), num(a, "key_generation"), str(a, "state"),
                    (String) a.get("directory"), (String) a.get("endpoint"), num(a, "sessions"), num(a, "owned_runs"), num(a, "imports"),
                    num(a, "leases"), byPhase, num(a, "unreadable_records"));
            return new WithJson<>(v, new RawJson(body));
        } catch (ClassCastException | NullPointerException e) {
            throw unexpected("not an authority view");
        }
    }

    /** {@code GET /v1/runs}: every run with a verified record. */
    public List<RunView> runs() throws IOException {
        return runsWithJson().value();
    }

    /** {@code GET /v1/runs}, with the helper's document as it is. */
    public WithJson<List<RunView>> runsWithJson() throws IOException {
        byte[] body = call("GET", "/v1/runs", null, null, JSON, null);
        Object parsed = parse(body);
        if (!(parsed instanceof List<?> list)) {
            throw unexpected("malformed JSON");
        }
        List<RunView> runs = new ArrayList<>();
        for (Object o : list) {
            runs.add(runView(o));
        }
        return new WithJson<>(List.copyOf(runs), new RawJson(body));
    }

    /** {@code GET /v1/runs/{run_id}}. */
    public RunView run(String runId) throws IOException {
        return runWithJson(runId).value();
    }

    /** {@code GET /v1/runs/{run_id}}, with the helper's document as it is. */
    public WithJson<RunView> runWithJson(String runId) throws IOException {
        return runAnswer(call("GET", runPath(runId), null, null, JSON, null));
    }

    /** {@code POST /v1/runs}: durable ACTIVE at generation 1, the lease to {@code session}. */
    public RunView start(Session session, String runId) throws IOException {
        requireRunId(runId);
        byte[] body = ("{\"run_id\":" + quote(runId) + "}").getBytes(StandardCharsets.UTF_8);
        return runAnswer(call("POST", "/v1/runs", session, JSON, JSON, body)).value();
    }

    /**
     * {@code POST /v1/runs/{run_id}/snapshots}: the payload in (as
     * {@code application/vnd.spice.snapshot.v1alpha2+json} or {@code …v1alpha3+json}, after the
     * payload's own version; the helper refuses a type whose version differs), the signed
     * {@code SnapshotEnvelope} (binary protobuf) out. The identical payload of a SUSPENDED run gives
     * the identical envelope again, to any session: a lost answer is recovered by sending it again.
     * A {@code cancelled} answer to a sign is not repeated and does not prove that nothing was
     * written ({@link HelperProblem.Cancelled#nothingHappened()} is false): wire-format e.4 lets a
     * helper report cancellation after a successful signing write.
     */
    public byte[] sign(Session session, String runId, byte[] payload) throws IOException {
        Objects.requireNonNull(payload, "payload");
        boolean v1alpha3 = spice.authority.snapshot.SnapshotFormat.ofCanonicalPayload(payload)
                .orElse(null) == spice.authority.snapshot.SnapshotFormat.V1ALPHA3;
        return call("POST", runPath(runId) + "/snapshots", session, v1alpha3 ? PAYLOAD_V1ALPHA3 : PAYLOAD, PROTOBUF, payload, true);
    }

    /** {@code POST /v1/runs/{run_id}/resume}: local resume, ACTIVE at the next generation. */
    public RunView resume(Session session, String runId) throws IOException {
        return runAnswer(call("POST", runPath(runId) + "/resume", session, null, JSON, null)).value();
    }

    /** {@code DELETE /v1/runs/{run_id}/lease}: the host stopped; nothing is written. */
    public void release(Session session, String runId) throws IOException {
        call("DELETE", runPath(runId) + "/lease", session, null, JSON, null);
    }

    /** {@code POST /v1/runs/{run_id}/abandon}: operator action on an orphan: a CANCELLED tombstone. */
    public RunView abandon(Session session, String runId) throws IOException {
        return abandonWithJson(session, runId).value();
    }

    /** {@link #abandon}, with the helper's document as it is. */
    public WithJson<RunView> abandonWithJson(Session session, String runId) throws IOException {
        return runAnswer(call("POST", runPath(runId) + "/abandon", session, null, JSON, null));
    }

    // ---- imports ------------------------------------------------------------------------------

    /** {@code POST /v1/imports}: verify the envelope and lock the run for this session's import. */
    public ImportView prepareImport(Session session, byte[] envelope) throws IOException {
        Objects.requireNonNull(envelope, "envelope");
        Map<String, Object> o = object(call("POST", "/v1/imports", session, PROTOBUF, JSON, envelope));
        try {
            String id = str(o, "import");
            if (!visibleAscii(id)) {
                throw unexpected("not an import");
            }
            return new ImportView(id, str(o, "run_id"), num(o, "last_sequence"), num(o, "next_sequence"));
        } catch (ClassCastException | NullPointerException | IllegalArgumentException e) {
            throw unexpected("not an import");
        }
    }

    /** {@code POST /v1/imports/{import}/consume}: durable IMPORTING, the consume point. */
    public RunView consume(Session session, ImportView tx) throws IOException {
        return runAnswer(call("POST", importPath(tx) + "/consume", session, null, JSON, null)).value();
    }

    /** {@code POST /v1/imports/{import}/activate}: durable ACTIVE; the run's lease is now this session's. */
    public RunView activate(Session session, ImportView tx) throws IOException {
        return runAnswer(call("POST", importPath(tx) + "/activate", session, null, JSON, null)).value();
    }

    /** {@code DELETE /v1/imports/{import}}: clean before consume; after it, {@code uncertain}. */
    public void abortImport(Session session, ImportView tx) throws IOException {
        call("DELETE", importPath(tx), session, null, JSON, null);
    }

    /** {@code POST /v1/snapshots/inspect}: structural view of an envelope (never says it is authentic). */
    public RawJson inspect(byte[] envelope) throws IOException {
        Objects.requireNonNull(envelope, "envelope");
        byte[] body = call("POST", "/v1/snapshots/inspect", null, PROTOBUF, JSON, envelope);
        parse(body);
        return new RawJson(body);
    }

    // ---- plumbing -----------------------------------------------------------------------------

    private byte[] call(String method, String target, Session session, String contentType, String accept, byte[] body)
            throws IOException {
        return call(method, target, session, contentType, accept, body, false);
    }

    /** {@code signing}: the call is a sign, whose {@code cancelled} answer may follow its write. */
    private byte[] call(String method, String target, Session session, String contentType, String accept, byte[] body,
                        boolean signing) throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Accept", accept + ", " + PROBLEM);
        if (contentType != null) {
            headers.put("Content-Type", contentType);
        }
        if (session != null) {
            headers.put(SESSION, session.id());
        }
        for (int attempt = 1; ; attempt++) {
            Duration retryAfter = null;
            try {
                // A sign's answer is the envelope (up to its own bound); the rest are small documents.
                HttpTransport.Response r = signing
                        ? http.send(method, target, headers, body, spice.authority.snapshot.envelope.Envelope.MAX_ENCODED_BYTES)
                        : http.send(method, target, headers, body);
                if (r.isSuccess()) {
                    return r.body();
                }
                throw problem(r, session, signing);
            } catch (HelperUnreachable e) {
                // Nothing was sent: repeating cannot do anything twice.
                if (attempt >= retry.maxAttempts()) {
                    throw e;
                }
            } catch (HelperProblem p) {
                // SECURITY: only an answer that proves nothing happened is repeated; uncertain never is.
                if (!p.nothingHappened() || attempt >= retry.maxAttempts()) {
                    throw p;
                }
                retryAfter = p instanceof HelperProblem.Busy b ? b.retryAfter().orElse(null) : null;
            }
            pause(retry.backoff(attempt, retryAfter));
        }
    }

    private static void pause(Duration d) throws IOException {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            // Only a call whose last answer proved nothing happened is waited on: still nothing done.
            throw new HelperInterrupted("interrupted while waiting to repeat a call that did nothing");
        }
    }

    /** A problem body as its typed exception; anything else an "unexpected response". */
    private IOException problem(HttpTransport.Response r, Session session, boolean signing) {
        String reason = r.reason().isEmpty() ? "(no reason given)" : r.reason();
        Map<String, Object> p;
        try {
            p = Json.object(r.body());
        } catch (Json.Malformed e) {
            p = Map.of();
        }
        if (!(p.get("code") instanceof String code)) {
            return unexpected("HTTP " + r.status() + " " + reason);
        }
        String detail = p.get("detail") instanceof String d ? d : reason;
        String title = p.get("title") instanceof String t ? t : "";
        String rule = p.get("rule") instanceof String s ? s : null;
        if (session != null) {
            // SECURITY: the session id never reaches a message, even if the helper echoed it.
            detail = detail.replace(session.id(), "<session>");
            title = title.replace(session.id(), "<session>");
        }
        HelperProblem.Fields f = new HelperProblem.Fields(r.status(), code, title, detail, rule, retryAfter(r));
        return HelperProblem.of(f, signing);
    }

    /** {@code Retry-After} in seconds (the helper sends no dates); null when absent or unreadable. */
    private static Duration retryAfter(HttpTransport.Response r) {
        String v = r.header("retry-after");
        if (v == null || v.isEmpty() || v.length() > 6 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return null;
        }
        return Duration.ofSeconds(Long.parseLong(v));
    }

    private WithJson<RunView> runAnswer(byte[] body) throws IOException {
        return new WithJson<>(runView(parse(body)), new RawJson(body));
    }

    private RunView runView(Object o) throws HelperProtocolError {
        if (o instanceof Map<?, ?> m && m.get("run_id") instanceof String id && m.get("phase") instanceof String text
                && m.get("run_generation") instanceof Long gen
                && (m.get("owned") == null || m.get("owned") instanceof Boolean)
                && (m.get("fenced") == null || m.get("fenced") instanceof Boolean)) {
            // The text came from the helper: an unknown phase is refused, never echoed.
            RunPhase phase = RunPhase.parse(text).orElseThrow(() -> unexpected("a run in an unknown phase"));
            return new RunView(id, phase, gen, Boolean.TRUE.equals(m.get("owned")), Boolean.TRUE.equals(m.get("fenced")));
        }
        throw unexpected("not a run");
    }

    private Object parse(byte[] body) throws HelperProtocolError {
        try {
            return Json.parse(body);
        } catch (Json.Malformed e) {
            throw unexpected("malformed JSON");
        }
    }

    private Map<String, Object> object(byte[] body) throws HelperProtocolError {
        try {
            return Json.object(body);
        } catch (Json.Malformed e) {
            throw unexpected("malformed JSON");
        }
    }

    private HelperProtocolError unexpected(String what) {
        return new HelperProtocolError("unexpected response from the helper at " + http.endpoint().display() + ": " + what);
    }

    private static String str(Map<String, Object> o, String name) {
        return (String) Objects.requireNonNull(o.get(name));
    }

    private static long num(Map<String, Object> o, String name) {
        return (Long) Objects.requireNonNull(o.get(name));
    }

    private static boolean visibleAscii(String s) {
        return s.chars().allMatch(c -> c > ' ' && c < 0x7f);
    }

    private static void requireRunId(String runId) {
        if (runId == null || !RunId.isValid(runId)) {
            throw new IllegalArgumentException("not a run ID: " + RunId.RULE);
        }
    }

    private static String runPath(String runId) {
        requireRunId(runId);
        return "/v1/runs/" + HttpTransport.segment(runId);
    }

    private static String importPath(ImportView tx) {
        return "/v1/imports/" + HttpTransport.segment(tx.importId());
    }

    /** A JSON string of a valid run ID (no control characters, by the run-ID rule). */
    private static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('"').toString();
    }
}
