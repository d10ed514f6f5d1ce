package spice.authority.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.InetAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.snapshot.contract.RunPhase;

class AuthorityClientTest {
    private static final String SESSION_ID = "5e55104d5e55104d5e55104d5e55104d";
    private static final String TOKEN = "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface";
    private static final String RUN = "{\"run_id\":\"run-1\",\"phase\":\"%s\",\"run_generation\":%d,\"owned\":%s}";
    private static final RetryPolicy FAST = new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(5));

    private static AuthorityClient client(Path sock, RetryPolicy retry) {
        return AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(retry).build();
    }

    private static byte[] run(String phase, long gen, boolean owned) {
        return FakeHelper.json(200, RUN.formatted(phase, gen, owned));
    }

    /** A fake helper answering every operation of the API as the real one shapes its answers. */
    private static byte[] helper(FakeHelper.Request r) {
        return switch (r.line()) {
            case "POST /v1/sessions" -> FakeHelper.json(200, "{\"session\":\"" + SESSION_ID + "\",\"pid\":77}");
            case "DELETE /v1/sessions/" + SESSION_ID -> FakeHelper.noContent();
            case "GET /v1/authority" -> FakeHelper.chunked(200, "application/json", "{\"scope_id\":\"ab12\",\"key_generation\":"
                    + "18446744073709551615,\"state\":\"open\",\"directory\":\"/d\",\"endpoint\":\"unix:/s\",\"sessions\":1,"
                    + "\"owned_runs\":1,\"imports\":0,\"leases\":1,\"runs_by_phase\":{\"SUSPENDED\":2,\"ACTIVE\":1},"
                    + "\"unreadable_records\":0}", 5);
            case "GET /v1/runs" -> FakeHelper.chunked(200, "application/json", "[" + RUN.formatted("ACTIVE", 1, true)
                    + ",{\"run_id\":\"run-9\",\"phase\":\"ACTIVE\",\"run_generation\":3,\"owned\":false,\"fenced\":true}]", 7);
            case "POST /v1/runs" -> run("ACTIVE", 1, true);
            case "GET /v1/runs/run-1" -> run("SUSPENDED", 1, true);
            case "POST /v1/runs/run-1/snapshots" -> envelope(r.body());
            case "POST /v1/runs/run-1/resume" -> run("ACTIVE", 2, true);
            case "DELETE /v1/runs/run-1/lease", "DELETE /v1/imports/imp-1" -> FakeHelper.noContent();
            case "POST /v1/runs/run-1/abandon" -> run("CANCELLED", 2, false);
            case "POST /v1/imports" -> FakeHelper.json(200,
                    "{\"import\":\"imp-1\",\"run_id\":\"run-1\",\"last_sequence\":7,\"next_sequence\":8}");
            case "POST /v1/imports/imp-1/consume" -> run("IMPORTING", 2, false);
            case "POST /v1/imports/imp-1/activate" -> run("ACTIVE", 3, true);
            case "POST /v1/snapshots/inspect" -> FakeHelper.json(200, "{\"structure\":\"ok\"}");
            default -> FakeHelper.problem(404, "not_found", "no route");
        };
    }

    /** The "envelope": the payload reversed, as binary protobuf would be opaque bytes. */
    private static byte[] envelope(byte[] payload) {
        byte[] out = new byte[payload.length];
        for (int i = 0; i < payload.length; i++) {
            out[i] = payload[payload.length - 1 - i];
        }
        String head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: " + out.length + "\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[h.length + out.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(out, 0, all, h.length, out.length);
        return all;
    }

    /**
     * A signed envelope may be up to 16 MiB + 1 KiB (a payload near its 16 MiB limit): the sign's
     * answer is bounded by that, not by the 8 MiB of the API's documents. Before, a run whose history
     * passed ~8 MiB could be suspended but never exported: every answer was refused as too large.
     */
    @Test
    void sign_answerOfTenMiB_isReceived_aDocumentOfTenMiBIsNot(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        String big = "x".repeat(10 << 20);
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.raw(200,
                r.target().endsWith("/snapshots") ? "application/x-protobuf" : "application/json", big))) {
            AuthorityClient c = client(sock, RetryPolicy.NONE);
            assertThat(c.sign(new Session(SESSION_ID, 1), "run-1", new byte[] {1})).hasSize(10 << 20);
            assertThatThrownBy(c::runs).isInstanceOf(HelperProtocolError.class).hasMessageContaining("larger than");
        }
    }

    @Test
    void everyOperation_sendsTheApisRequest_andReadsItsAnswer(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, AuthorityClientTest::helper)) {
            AuthorityClient c = client(sock, RetryPolicy.NONE);
            Session s = c.openSession();
            assertThat(s.pid()).isEqualTo(77);
            AuthorityView a = c.authority();
            assertThat(a.scopeId()).isEqualTo("ab12");
            assertThat(Long.toUnsignedString(a.keyGeneration())).isEqualTo("18446744073709551615");
            assertThat(a.runsByPhase()).containsExactly(Map.entry("SUSPENDED", 2L), Map.entry("ACTIVE", 1L));
            assertThat(c.start(s, "run-1")).isEqualTo(new RunView("run-1", RunPhase.ACTIVE, 1, true, false));
            byte[] payload = "{\"run_id\":\"run-1\"}".getBytes(StandardCharsets.UTF_8);
            byte[] env = c.sign(s, "run-1", payload);
            assertThat(envelope(env)).endsWith(payload);
            assertThat(c.run("run-1")).isEqualTo(new RunView("run-1", RunPhase.SUSPENDED, 1, true, false));
            assertThat(c.runs()).containsExactly(new RunView("run-1", RunPhase.ACTIVE, 1, true, false),
                    new RunView("run-9", RunPhase.ACTIVE, 3, false, true));
            assertThat(c.resume(s, "run-1").runGeneration()).isEqualTo(2);
            c.release(s, "run-1");
            ImportView tx = c.prepareImport(s, env);
            assertThat(tx).isEqualTo(new ImportView("imp-1", "run-1", 7, 8));
            assertThat(c.consume(s, tx).phase()).isEqualTo(RunPhase.IMPORTING);
            assertThat(c.activate(s, tx)).isEqualTo(new RunView("run-1", RunPhase.ACTIVE, 3, true, false));
            c.abortImport(s, tx);
            assertThat(c.abandon(s, "run-1").phase()).isEqualTo(RunPhase.CANCELLED);
            assertThat(c.inspect(env).text()).isEqualTo("{\"structure\":\"ok\"}");
            c.closeSession(s);

            List<FakeHelper.Request> q = h.requests();
            assertThat(q).extracting(FakeHelper.Request::line).containsExactly(
                    "POST /v1/sessions", "GET /v1/authority", "POST /v1/runs", "POST /v1/runs/run-1/snapshots",
                    "GET /v1/runs/run-1", "GET /v1/runs", "POST /v1/runs/run-1/resume", "DELETE /v1/runs/run-1/lease",
                    "POST /v1/imports", "POST /v1/imports/imp-1/consume", "POST /v1/imports/imp-1/activate",
                    "DELETE /v1/imports/imp-1", "POST /v1/runs/run-1/abandon", "POST /v1/snapshots/inspect",
                    "DELETE /v1/sessions/" + SESSION_ID);
            assertThat(q.get(0).bodyText()).isEqualTo("{\"pid\":" + ProcessHandle.current().pid() + "}");
            assertThat(q.get(1).header("Spice-Session")).isNull();
            assertThat(q.get(2).bodyText()).isEqualTo("{\"run_id\":\"run-1\"}");
            assertThat(q.get(3).header("Content-Type")).isEqualTo("application/vnd.spice.snapshot.v1alpha2+json");
            assertThat(q.get(3).header("Accept")).startsWith("application/x-protobuf");
            assertThat(q.get(3).body()).isEqualTo(payload);
            assertThat(q.get(8).header("Content-Type")).isEqualTo("application/x-protobuf");
            assertThat(q.get(8).body()).isEqualTo(env);
            for (int i : new int[] {2, 3, 6, 7, 8, 9, 10, 11, 12}) {
                assertThat(q.get(i).header("Spice-Session")).as(q.get(i).line()).isEqualTo(SESSION_ID);
            }
        }
    }

    @Test
    void sign_sendsTheMediaTypeOfThePayloadsOwnVersion(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, AuthorityClientTest::helper)) {
            AuthorityClient c = client(sock, RetryPolicy.NONE);
            Session s = new Session(SESSION_ID, 1);
            for (String version : new String[] {"v1alpha3", "v1alpha2"}) {
                c.sign(s, "run-1", ("{\"version\":\"spice.agent.snapshot/" + version + "\",\"run_id\":\"run-1\"}")
                        .getBytes(StandardCharsets.UTF_8));
            }
            assertThat(h.requests()).extracting(r -> r.header("Content-Type")).containsExactly(
                    "application/vnd.spice.snapshot.v1alpha3+json", "application/vnd.spice.snapshot.v1alpha2+json");
        }
    }

    @Test
    void withJson_keepsTheHelpersDocumentAsSent_evenChunked(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, AuthorityClientTest::helper)) {
            WithJson<List<RunView>> runs = client(sock, RetryPolicy.NONE).runsWithJson();
            assertThat(runs.json().text()).startsWith("[{\"run_id\":\"run-1\"").endsWith("\"fenced\":true}]");
            assertThat(runs.value()).hasSize(2);
            assertThat(runs.json().toString()).doesNotContain("run-1");
        }
    }

    @Test
    void everyProblemCode_isItsOwnSubtype_withCodeDetailAndRule(@TempDir Path tmp) throws Exception {
        Map<String, Class<? extends HelperProblem>> codes = new LinkedHashMap<>();
        codes.put("invalid_request", HelperProblem.InvalidRequest.class);
        codes.put("invalid_snapshot", HelperProblem.InvalidSnapshot.class);
        codes.put("verification_failed", HelperProblem.VerificationFailed.class);
        codes.put("unsupported_format", HelperProblem.UnsupportedFormat.class);
        codes.put("busy", HelperProblem.Busy.class);
        codes.put("state_conflict", HelperProblem.StateConflict.class);
        codes.put("uncertain", HelperProblem.Uncertain.class);
        codes.put("unavailable", HelperProblem.Unavailable.class);
        codes.put("closing", HelperProblem.Closing.class);
        codes.put("not_found", HelperProblem.NotFound.class);
        codes.put("unauthorized", HelperProblem.Unauthorized.class);
        codes.put("cancelled", HelperProblem.Cancelled.class);
        codes.put("from_the_future", HelperProblem.Unrecognized.class);
        Path sock = tmp.resolve("a.sock");
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, Class<? extends HelperProblem>> e : codes.entrySet()) {
            String body = "{\"type\":\"urn:x\",\"title\":\"T\",\"status\":409,\"code\":\"" + e.getKey()
                    + "\",\"detail\":\"d " + e.getKey() + "\"" + (e.getKey().equals("invalid_snapshot") ? ",\"rule\":\"P-CALL-DUP\"" : "") + "}";
            try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.raw(409, "application/problem+json", body))) {
                Throwable t = catchThrowable(() -> client(sock, RetryPolicy.NONE).run("run-1"));
                if (!(t instanceof HelperProblem p) || p.getClass() != e.getValue() || !p.code().equals(e.getKey())
                        || p.status() != 409 || !p.detail().equals("d " + e.getKey()) || !p.title().equals("T")) {
                    failures.add(e.getKey() + ": " + t);
                }
            }
        }
        assertThat(failures).isEmpty();
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.raw(422, "application/problem+json",
                "{\"code\":\"invalid_snapshot\",\"detail\":\"duplicate call\",\"rule\":\"P-CALL-DUP\"}"))) {
            HelperProblem.InvalidSnapshot p = (HelperProblem.InvalidSnapshot) catchThrowable(
                    () -> client(sock, RetryPolicy.NONE).sign(new Session(SESSION_ID, 1), "run-1", new byte[] {1}));
            assertThat(p.rule()).isEqualTo("P-CALL-DUP");
            assertThat(p).hasMessage("invalid_snapshot: duplicate call (rule P-CALL-DUP)");
        }
    }

    @Test
    void nonProblemError_andMalformedAnswers_areProtocolErrors(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.raw(502, "text/html", "<h1>bad gateway</h1>"))) {
            assertThatThrownBy(() -> client(sock, RetryPolicy.NONE).runs()).isInstanceOf(HelperProtocolError.class)
                    .hasMessage("unexpected response from the helper at unix:" + sock + ": HTTP 502 Status");
        }
        for (String bad : new String[] {"{", "{\"run_id\":\"r\"}", "{\"run_id\":\"r\",\"phase\":\"ACTIVE\",\"run_generation\":-1}",
                "{\"run_id\":\"r\",\"run_id\":\"s\",\"phase\":\"ACTIVE\",\"run_generation\":1}"}) {
            try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.json(200, bad))) {
                assertThatThrownBy(() -> client(sock, RetryPolicy.NONE).run("run-1")).as(bad).isInstanceOf(HelperProtocolError.class);
            }
        }
    }

    @Test
    void runInAPhaseNotInTheVocabulary_isAProtocolError_thatDoesNotEchoIt(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        for (String phase : new String[] {"PAUSED-\\u001b[31m", "active", "ACTIVE ", ""}) {
            String answer = "{\"run_id\":\"run-1\",\"phase\":\"" + phase + "\",\"run_generation\":1,\"owned\":true}";
            try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.json(200, answer))) {
                assertThatThrownBy(() -> client(sock, RetryPolicy.NONE).run("run-1")).as(phase)
                        .isInstanceOf(HelperProtocolError.class)
                        .hasMessage("unexpected response from the helper at unix:" + sock + ": a run in an unknown phase");
            }
        }
    }

    @Test
    void retry_unavailable_isRepeatedWithinTheBound_thenReported(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        int[] n = {0};
        Function<FakeHelper.Request, byte[]> twiceUnavailable = r -> ++n[0] <= 2
                ? FakeHelper.problem(503, "unavailable", "nothing was written") : run("ACTIVE", 1, true);
        try (FakeHelper h = FakeHelper.unix(sock, twiceUnavailable)) {
            assertThat(client(sock, FAST).start(new Session(SESSION_ID, 1), "run-1").phase()).isEqualTo(RunPhase.ACTIVE);
            assertThat(h.requests()).hasSize(3);
        }
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(503, "unavailable", "nothing was written"))) {
            assertThatThrownBy(() -> client(sock, FAST).start(new Session(SESSION_ID, 1), "run-1"))
                    .isInstanceOf(HelperProblem.Unavailable.class);
            assertThat(h.requests()).hasSize(FAST.maxAttempts());
        }
    }

    @Test
    void retry_interruptedWhileWaiting_endsAtOnce_nothingHappened_interruptKept(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        RetryPolicy slow = new RetryPolicy(3, java.time.Duration.ofSeconds(30), java.time.Duration.ofSeconds(30));
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(503, "unavailable", "nothing was written"))) {
            java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean interrupted = new java.util.concurrent.atomic.AtomicBoolean();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    client(sock, slow).start(new Session(SESSION_ID, 1), "run-1");
                } catch (Throwable e) {
                    failure.set(e);
                }
                interrupted.set(Thread.currentThread().isInterrupted());
            });
            Waits.awaitIn(t, AuthorityClient.class.getName(), "pause"); // now waiting 30 s to repeat
            assertThat(h.requests()).hasSize(1);
            long t0 = System.nanoTime();
            t.interrupt();
            t.join(10_000);
            assertThat((System.nanoTime() - t0) / 1_000_000).as("ms to end the wait").isLessThan(5_000);
            assertThat(failure.get()).as("the last answer proved nothing happened: a known outcome")
                    .isInstanceOf(HelperInterrupted.class);
            assertThat(interrupted).isTrue();
            assertThat(h.requests()).hasSize(1);
        }
    }

    @Test
    void retry_cancelledSign_isNotRepeated_andMayFollowTheWrite_otherCallsAre(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(503, "cancelled", "cancelled"))) {
            assertThatThrownBy(() -> client(sock, FAST).sign(new Session(SESSION_ID, 1), "run-1", new byte[] {1}))
                    .isInstanceOfSatisfying(HelperProblem.Cancelled.class, c -> {
                        assertThat(c.mayFollowWrite()).isTrue();
                        assertThat(c.nothingHappened()).isFalse();
                    });
            assertThat(h.requests()).hasSize(1);
        }
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(503, "cancelled", "cancelled"))) {
            assertThatThrownBy(() -> client(sock, FAST).start(new Session(SESSION_ID, 1), "run-1"))
                    .isInstanceOfSatisfying(HelperProblem.Cancelled.class, c -> assertThat(c.nothingHappened()).isTrue());
            assertThat(h.requests()).hasSize(FAST.maxAttempts());
        }
    }

    @Test
    void retry_neverOnUncertain_norOnBusyWithoutRetryAfter_butOnBusyWithIt(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(500, "uncertain", "outcome unknown"))) {
            assertThatThrownBy(() -> client(sock, FAST).sign(new Session(SESSION_ID, 1), "run-1", new byte[] {1}))
                    .isInstanceOf(HelperProblem.Uncertain.class);
            assertThat(h.requests()).hasSize(1);
        }
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(409, "busy", "owned by a live session"))) {
            assertThatThrownBy(() -> client(sock, FAST).abandon(new Session(SESSION_ID, 1), "run-1"))
                    .isInstanceOf(HelperProblem.Busy.class);
            assertThat(h.requests()).hasSize(1);
        }
        byte[] quota = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 0\r\n"
                + "Content-Length: 30\r\n\r\n{\"code\":\"busy\",\"detail\":\"quota\"}").getBytes(StandardCharsets.ISO_8859_1);
        int[] n = {0};
        try (FakeHelper h = FakeHelper.unix(sock, r -> ++n[0] == 1 ? fixLength(quota) : run("ACTIVE", 1, true))) {
            assertThat(client(sock, FAST).start(new Session(SESSION_ID, 1), "run-1").owned()).isTrue();
            assertThat(h.requests()).hasSize(2);
        }
    }

    @Test
    void retry_busyForAQuota_isRepeated_busyForALiveOwnerIsNot(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        int[] n = {0};
        try (FakeHelper h = FakeHelper.unix(sock, r -> ++n[0] == 1
                ? FakeHelper.problem(429, "busy", "the session holds 64 leases and imports") : run("ACTIVE", 1, true))) {
            assertThat(client(sock, FAST).start(new Session(SESSION_ID, 1), "run-1").phase()).isEqualTo(RunPhase.ACTIVE);
            assertThat(h.requests()).hasSize(2);
        }
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(409, "busy", "run run-1 is owned by a live session"))) {
            HelperProblem.Busy b = (HelperProblem.Busy) catchThrowable(() -> client(sock, FAST).prepareImport(
                    new Session(SESSION_ID, 1), new byte[] {1}));
            assertThat(b.isQuota()).isFalse();
            assertThat(b.nothingHappened()).isFalse();
            assertThat(h.requests()).hasSize(1);
        }
    }

    private static byte[] fixLength(byte[] response) {
        String s = new String(response, StandardCharsets.ISO_8859_1);
        String body = s.substring(s.indexOf("\r\n\r\n") + 4);
        return s.replaceFirst("Content-Length: \\d+", "Content-Length: " + body.length()).getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void retry_connectionRefused_isRepeated_becauseNothingWasSent(@TempDir Path tmp) throws Exception {
        Path stale = tmp.resolve("stale.sock");
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(stale));
        }
        long t0 = System.nanoTime();
        RetryPolicy slow = new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(100));
        assertThatThrownBy(() -> client(stale, slow).runs()).isInstanceOf(HelperUnreachable.class);
        // Three attempts, two pauses of 100 ms between them.
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    }

    /**
     * A helper that does not accept fast enough (its backlog is full): a Unix socket refuses the
     * connection at once (EAGAIN), loopback TCP leaves it pending until the connect timeout. Either
     * way no connection was made and nothing was sent: unreachable, so repeated, and never an
     * unknown outcome for a mutating call.
     */
    @Test
    void retry_backlogFull_noConnection_isUnreachable_andRepeated(@TempDir Path tmp) throws Exception {
        RetryPolicy slow = new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(100));
        Path sock = tmp.resolve("full.sock");
        List<java.nio.channels.SocketChannel> fillers = new ArrayList<>();
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(sock), 1);
            fill(fillers, StandardProtocolFamily.UNIX, UnixDomainSocketAddress.of(sock));
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> client(sock, slow).start(new Session(SESSION_ID, 1), "run-1"))
                    .isInstanceOf(HelperUnreachable.class);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        } finally {
            for (var c : fillers) {
                c.close();
            }
            fillers.clear();
        }
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        List<java.net.Socket> tcpFillers = new ArrayList<>();
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            for (int i = 0; ; i++) { // until the full accept queue drops the handshake
                assertThat(i).as("the backlog never filled").isLessThan(64);
                java.net.Socket f = new java.net.Socket();
                tcpFillers.add(f);
                try {
                    f.connect(s.getLocalAddress(), 200);
                } catch (java.net.SocketTimeoutException e) {
                    break;
                }
            }
            int port = ((java.net.InetSocketAddress) s.getLocalAddress()).getPort();
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), port, tokenFile))
                    .retry(new RetryPolicy(2, Duration.ofMillis(10), Duration.ofMillis(10)))
                    .timeouts(Duration.ofMillis(300), Duration.ofSeconds(5)).build();
            assertThatThrownBy(() -> c.start(new Session(SESSION_ID, 1), "run-1")).isInstanceOf(HelperUnreachable.class)
                    .hasMessageNotContaining(TOKEN);
        } finally {
            for (var c : tcpFillers) {
                c.close();
            }
        }
    }

    /** Connects without being accepted until the Unix listener's full backlog refuses (EAGAIN). */
    private static void fill(List<java.nio.channels.SocketChannel> out, StandardProtocolFamily family, java.net.SocketAddress to)
            throws Exception {
        for (int i = 0; i < 64; i++) {
            java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open(family);
            c.configureBlocking(false);
            out.add(c);
            try {
                c.connect(to);
            } catch (java.net.SocketException e) {
                return; // refused for now: the backlog is full
            }
        }
        throw new IllegalStateException("the backlog never filled");
    }

    @Test
    void retry_notAfterTheRequestWasSentAndTheAnswerLost(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> new byte[0])) { // reads the request, closes without an answer
            assertThatThrownBy(() -> client(sock, FAST).start(new Session(SESSION_ID, 1), "run-1"))
                    .isInstanceOf(HelperProtocolError.class);
            assertThat(h.requests()).hasSize(1);
        }
    }

    @Test
    void secrets_sessionIdAndToken_neverInToStringOrMessages(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> r.line().equals("POST /v1/sessions")
                ? FakeHelper.json(200, "{\"session\":\"" + SESSION_ID + "\",\"pid\":5}")
                : FakeHelper.problem(409, "state_conflict", "session " + SESSION_ID + " does not own run-1"))) {
            AuthorityClient c = client(sock, RetryPolicy.NONE);
            Session s = c.openSession();
            assertThat(s.toString()).doesNotContain(SESSION_ID).contains("pid=5");
            Throwable t = catchThrowable(() -> c.resume(s, "run-1"));
            assertThat(t).isInstanceOf(HelperProblem.StateConflict.class).hasMessage("state_conflict: session <session> does not own run-1");
            assertThat(((HelperProblem) t).detail()).doesNotContain(SESSION_ID);
            assertThat(c.toString()).doesNotContain(SESSION_ID);
        }
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.problem(401, "unauthorized", "bad token"))) {
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), h.port(), tokenFile))
                    .retry(RetryPolicy.NONE).build();
            Throwable t = catchThrowable(c::runs);
            assertThat(t).isInstanceOf(HelperProblem.Unauthorized.class).hasMessageNotContaining(TOKEN);
            assertThat(h.requests().getFirst().header("Authorization")).isEqualTo("Bearer " + TOKEN);
            assertThat(c.toString()).doesNotContain(TOKEN);
            assertThat(c.endpoint().toString()).doesNotContain(TOKEN);
        }
    }

    @Test
    void badRunId_isRefusedBeforeAnythingIsSent(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, AuthorityClientTest::helper)) {
            AuthorityClient c = client(sock, RetryPolicy.NONE);
            for (String bad : new String[] {"", " run", "a\nb", "x".repeat(97)}) {
                assertThatThrownBy(() -> c.run(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> c.start(new Session(SESSION_ID, 1), bad)).isInstanceOf(IllegalArgumentException.class);
            }
            assertThat(h.requests()).isEmpty();
        }
    }

    @Test
    void tcpServerCheck_refusal_sendsNothing_theTokenStaysHere(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "[]"))) {
            List<String> asked = new ArrayList<>();
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), h.port(), tokenFile))
                    .retry(RetryPolicy.NONE).tcpServerCheck((server, local) -> {
                        asked.add(server.getPort() + "<-" + local.getPort());
                        throw new java.io.IOException("the listener runs as another user");
                    }).build();
            Throwable t = catchThrowable(c::runs);
            assertThat(t).isInstanceOf(java.io.IOException.class).hasMessageContaining("the listener runs as another user")
                    .hasMessageNotContaining(TOKEN);
            assertThat(asked).singleElement().asString().startsWith(h.port() + "<-");
            h.sync(); // the fake helper read whatever came
            assertThat(h.requests()).as("not a byte sent: no token to a listener of another user").isEmpty();
            assertThat(h.proofs()).as("the platform's check comes before the endpoint proof").isZero();
        }
    }

    @Test
    void tcpServerCheck_isGivenTheHelpersEndThenOurs_andPassing_sendsTheRequest(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "[]"))) {
            List<java.net.InetSocketAddress[]> asked = new ArrayList<>();
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), h.port(), tokenFile))
                    .retry(RetryPolicy.NONE).tcpServerCheck((server, local) -> asked.add(
                            new java.net.InetSocketAddress[] {server, local})).build();
            c.runs();
            assertThat(asked).hasSize(1);
            assertThat(asked.get(0)[0]).isEqualTo(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), h.port()));
            assertThat(asked.get(0)[1].getAddress().isLoopbackAddress()).isTrue();
            assertThat(asked.get(0)[1].getPort()).isNotEqualTo(h.port()).isPositive();
            assertThat(h.proofs()).isEqualTo(1);
            assertThat(h.requests()).singleElement().satisfies(r -> assertThat(r.header("Authorization")).isEqualTo("Bearer " + TOKEN));
        }
    }
}
