package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperProtocolError;
import spice.authority.host.RetryPolicy;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The reference engine against a fake helper on a real Unix socket (the real client, transport and
 * problem mapping underneath), for the helper answers a real helper gives only under faults: a
 * lost session, an answer code this client does not know.
 */
class EngineAuthorityFailureTest {
    private static final String SESSION = "5e55104d5e55104d5e55104d5e55104d";

    /** The spec's minimal valid payload (payload-corpus/public/valid-01-minimal-suspended.json). */
    private static final String MINIMAL = "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"run-1\",\"definition\":{\"name\":\"test\","
                + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":"
                + "\"generation-1\",\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},"
                + "\"seen_interaction_ids\":[],\"last_sequence\":7,\"status\":\"suspended\"}";

    /** A well-shaped claim: the engine never verifies it, the helper does. */
    private static final Claim CLAIM = new Claim(new byte[32], 1, new byte[32]);

    /** What a real helper answers when nothing goes wrong. */
    static byte[] helper(FakeHelper.Request r) {
        String line = r.line();
        try {
            if (line.equals("POST /v1/sessions")) {
                return FakeHelper.json(200, "{\"session\":\"" + SESSION + "\",\"pid\":1}");
            }
            if (line.equals("POST /v1/runs")) {
                String id = r.bodyText().replaceAll(".*\"run_id\":\"([^\"]*)\".*", "$1");
                return run(id, "ACTIVE", 1, true);
            }
            if (line.startsWith("POST /v1/runs/") && line.endsWith("/snapshots")) {
                byte[] env = Envelopes.unsigned(Snapshot.decode(r.body())).seal(CLAIM).toBinary();
                return binary(env);
            }
            if (line.startsWith("GET /v1/runs/")) {
                return run(line.split("/")[3], "ACTIVE", 1, true);
            }
            if (line.startsWith("POST /v1/runs/") && line.endsWith("/resume")) {
                return run(line.split("/")[3], "ACTIVE", 2, true);
            }
            if (line.startsWith("DELETE ")) {
                return FakeHelper.noContent();
            }
            if (line.equals("POST /v1/imports")) {
                Envelope e = Envelope.parse(r.body());
                return FakeHelper.json(200, "{\"import\":\"imp-1\",\"run_id\":\"" + e.runId() + "\",\"last_sequence\":"
                        + Long.toUnsignedString(e.lastSequence()) + ",\"next_sequence\":"
                        + Long.toUnsignedString(e.lastSequence() + 1) + "}");
            }
            if (line.equals("POST /v1/imports/imp-1/consume")) {
                return run("run-x", "IMPORTING", 2, false);
            }
            if (line.equals("POST /v1/imports/imp-1/activate")) {
                return run("run-x", "ACTIVE", 2, true);
            }
        } catch (Exception e) {
            return FakeHelper.problem(400, "invalid_request", "fake helper: " + e.getClass().getSimpleName());
        }
        return FakeHelper.problem(404, "not_found", "no route");
    }

    static byte[] run(String id, String phase, long gen, boolean owned) {
        return FakeHelper.json(200, "{\"run_id\":\"" + id + "\",\"phase\":\"" + phase + "\",\"run_generation\":" + gen
                + ",\"owned\":" + owned + "}");
    }

    static byte[] binary(byte[] body) {
        byte[] head = ("HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    /** Run run-1 of {@code engine}, started, one turn run, suspended. */
    private static Run suspended(Engine engine) throws EngineException {
        Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        run.suspend();
        return run;
    }

    /** {@code answers}, except that run-1 reads SUSPENDED (owned) once a snapshot of it was signed. */
    static Function<FakeHelper.Request, byte[]> suspendedOnceSigned(Function<FakeHelper.Request, byte[]> answers) {
        java.util.concurrent.atomic.AtomicBoolean signed = new java.util.concurrent.atomic.AtomicBoolean();
        return r -> {
            if (r.line().equals("POST /v1/runs/run-1/snapshots")) {
                signed.set(true);
            }
            if (r.line().equals("GET /v1/runs/run-1") && signed.get()) {
                return run("run-1", "SUSPENDED", 1, true);
            }
            return answers.apply(r);
        };
    }

    /** The helper, except that requests matching {@code route} get {@code answer}. */
    static Function<FakeHelper.Request, byte[]> except(String route, byte[] answer) {
        return r -> r.line().matches(route) ? answer : helper(r);
    }

    static Engine engine(Path sock, Path ledger) throws IOException {
        return engine(authorityOf(sock), ledger);
    }

    /** The client's Authority on the helper at {@code sock}, with a session of its own. */
    private static Authority authorityOf(Path sock) throws IOException {
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
        return Authorities.of(client, client.openSession());
    }

    private static Engine engine(Authority authority, Path ledger) {
        return Engine.builder(authority, ScriptedAgent.model(),
                StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(ledger, null))))
                .identity(ScriptedAgent.IDENTITY).build();
    }

    private static List<String> lines(Path ledger) throws IOException {
        return Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
    }

    // ---- a suspend refused because the session or lease is gone ---------------------------------

    @Test
    void suspend_refusedBecauseTheLeaseIsGone_stopsTheRun_noToolRunsAgain(@TempDir Path tmp) throws Exception {
        // What the helper answers a session it no longer knows (it restarted, or closed the session),
        // and a session that no longer owns the run: the host has lost its lease and must stop.
        List<byte[]> lostLease = List.of(
                FakeHelper.problem(401, "unauthorized", "unknown session"),
                FakeHelper.problem(409, "state_conflict", "run run-1 is not owned by this session"),
                FakeHelper.problem(404, "not_found", "no such session"));
        int i = 0;
        for (byte[] answer : lostLease) {
            Path sock = tmp.resolve("h" + i + ".sock");
            Path ledger = tmp.resolve("ledger-" + i++);
            try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs/run-1/snapshots", answer))) {
                Run run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
                run.runTurn();
                assertThat(lines(ledger)).hasSize(1);

                assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class,
                        e -> assertThat(e.uncertain()).isFalse());
                assertThat(run.phase()).as(new String(answer, StandardCharsets.UTF_8)).isNotEqualTo(Run.Phase.RUNNING);
                assertThatThrownBy(run::runTurn).as(new String(answer, StandardCharsets.UTF_8))
                        .isInstanceOf(RunStateException.class);
                assertThat(lines(ledger)).as("no tool ran after the lease was lost").hasSize(1);
            }
        }
    }

    @Test
    void suspend_refusedWithNothingWrittenAndTheLeaseKept_runGoesOn(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs/run-1/snapshots",
                FakeHelper.problem(503, "unavailable", "nothing was written")))) {
            Run run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).isFalse());
            assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);
            run.runTurn();
            assertThat(lines(ledger)).hasSize(2);
        }
    }

    @Test
    void suspend_helperUnreachable_nothingSentNoAnswerAboutTheLease_runGoesOn(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        Run run;
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
        }
        // Nothing listens for a moment (a full backlog refuses the same way): nothing was sent, and
        // no answer says the lease is gone.
        assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class,
                e -> assertThat(e.uncertain()).isFalse());
        assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            assertThat(Envelope.parse(run.suspend()).lastSequence()).isEqualTo(run.events().head());
        }
    }

    /**
     * A sign answered 200 with something that is not this payload's envelope (garbage, another
     * run's or another sequence's envelope) is never handed out: the outcome is unknown, the run is
     * suspended here, and export() asks again; a helper that answers right then gives the envelope.
     */
    @Test
    void suspend_answeredWithSomethingButItsEnvelope_isUncertain_exportRecovers(@TempDir Path tmp) throws Exception {
        List<byte[]> wrong = List.of(binary("not an envelope".getBytes(StandardCharsets.US_ASCII)), FakeHelper.json(200, "{}"));
        int i = 0;
        for (byte[] answer : wrong) {
            Path sock = tmp.resolve("w" + i + ".sock");
            Path ledger = tmp.resolve("wl-" + i++);
            java.util.concurrent.atomic.AtomicBoolean honest = new java.util.concurrent.atomic.AtomicBoolean();
            try (FakeHelper h = FakeHelper.unix(sock, r -> !honest.get() && r.line().equals("POST /v1/runs/run-1/snapshots")
                    ? answer : helper(r))) {
                Run run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
                run.runTurn();

                assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class,
                        e -> assertThat(e.uncertain()).isTrue());
                assertThat(run.phase()).isEqualTo(Run.Phase.SUSPENDED);
                honest.set(true);
                assertThat(Envelope.parse(run.export()).runId()).isEqualTo("run-1");
            }
        }
    }

    /**
     * A decorating Authority that throws after the helper signed (a RuntimeException, or an Error
     * such as running out of memory while the answer came in): the outcome is unknown, so the run
     * is suspended here, never goes on, and export() gets the envelope. Before, the run stayed
     * RUNNING with its lease flag set while the helper held it SUSPENDED.
     */
    @Test
    void suspend_decoratorThrowsAfterTheSign_runSuspendedHere_exportRecovers(@TempDir Path tmp) throws Exception {
        List<Throwable> failures = List.of(new IllegalStateException("decorator bug"), new OutOfMemoryError("simulated"));
        int i = 0;
        for (Throwable failure : failures) {
            Path sock = tmp.resolve("d" + i + ".sock");
            Path ledger = tmp.resolve("dl-" + i++);
            java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean(true);
            try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
                Authority throwing = new ForwardingAuthority(authorityOf(sock)) {
                    @Override
                    public byte[] sign(String runId, byte[] payload) throws IOException {
                        byte[] env = super.sign(runId, payload);
                        if (broken.get()) {
                            if (failure instanceof Error e) {
                                throw e;
                            }
                            throw (RuntimeException) failure;
                        }
                        return env;
                    }
                };
                Run run = engine(throwing, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
                run.runTurn();

                Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(run::suspend);

                if (failure instanceof Error) {
                    assertThat(thrown).isSameAs(failure);
                } else {
                    assertThat(thrown).isInstanceOfSatisfying(AuthorityFailedException.class, e -> assertThat(e.uncertain()).isTrue());
                }
                assertThat(run.phase()).as(failure.toString()).isEqualTo(Run.Phase.SUSPENDED);
                assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
                broken.set(false);
                assertThat(Envelope.parse(run.export()).runId()).isEqualTo("run-1");
            }
        }
    }

    /**
     * The same for the end of a run (complete) and a local resume: a decorator's exception after
     * the helper acted is an unknown outcome. complete(): export() gets the tombstone's envelope;
     * resumeLocal(): the helper's view shows the resume took effect, and the run goes on.
     */
    @Test
    void completeAndResume_decoratorThrowsAfterTheHelperActed_handledAsAnUnknownOutcome(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("c.sock");
        Path ledger = tmp.resolve("cl");
        java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean();
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            Authority throwing = new ForwardingAuthority(authorityOf(sock)) {
                @Override
                public byte[] sign(String runId, byte[] payload) throws IOException {
                    byte[] env = super.sign(runId, payload);
                    if (broken.getAndSet(false)) {
                        throw new IllegalStateException("decorator bug");
                    }
                    return env;
                }

                @Override
                public void resume(String runId) throws IOException {
                    super.resume(runId);
                    if (broken.getAndSet(false)) {
                        throw new IllegalStateException("decorator bug");
                    }
                }
            };
            Run run = engine(throwing, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            run.suspend();
            broken.set(true);
            run.resumeLocal(); // the helper's view (ACTIVE, owned) shows it took effect
            assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);

            broken.set(true);
            assertThatThrownBy(run::complete).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).isTrue());
            assertThat(run.phase()).isEqualTo(Run.Phase.COMPLETED);
            assertThat(Envelope.parse(run.export()).runId()).isEqualTo("run-1");
        }
    }

    /**
     * The check costs no copy of a large payload: an envelope of an 8 MB payload is checked in
     * place (a strict validation decoded and copied it, about 6 times its size, after the helper
     * had already signed).
     */
    @Test
    void requireEnvelopeOf_largePayload_checkedInPlace() throws Exception {
        StringBuilder history = new StringBuilder();
        String text = "y".repeat(1_000_000);
        for (int m = 0; m < 8; m++) {
            history.append(m == 0 ? "" : ",").append("{\"id\":\"m").append(m).append("\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"")
                    .append(text).append("\"}]}");
        }
        byte[] payload = MINIMAL.replace("{\"id\":\"input-1\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}",
                history.toString()).getBytes(StandardCharsets.UTF_8);
        byte[] env = Envelopes.unsigned(Snapshot.decode(payload)).seal(CLAIM).toBinary();
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        Authorities.requireEnvelopeOf("run-1", payload, env); // warm-up
        long before = threads.getThreadAllocatedBytes(Thread.currentThread().threadId());
        assertThat(Authorities.requireEnvelopeOf("run-1", payload, env)).isSameAs(env);
        long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().threadId()) - before;
        assertThat(allocated).as("bytes allocated checking an envelope of " + payload.length + " bytes").isLessThan(1_000_000);
    }

    /** The envelope of another run's, or another sequence's, payload is refused like garbage. */
    @Test
    void requireEnvelopeOf_onlyThisPayloadsEnvelope() throws Exception {
        byte[] payload = MINIMAL.getBytes(StandardCharsets.UTF_8);
        byte[] env = Envelopes.unsigned(Snapshot.decode(payload)).seal(CLAIM).toBinary();
        assertThat(Authorities.requireEnvelopeOf("run-1", payload, env)).isSameAs(env);
        byte[] later = new String(payload, StandardCharsets.UTF_8).replace("\"last_sequence\":7", "\"last_sequence\":9")
                .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> Authorities.requireEnvelopeOf("run-1", later, env)).isInstanceOf(HelperProtocolError.class)
                .hasMessageContaining("not the envelope of the payload sent");
        assertThatThrownBy(() -> Authorities.requireEnvelopeOf("run-2", payload, env)).isInstanceOf(HelperProtocolError.class);
        assertThatThrownBy(() -> Authorities.requireEnvelopeOf("run-1", payload, new byte[] {1, 2, 3}))
                .isInstanceOf(HelperProtocolError.class).hasMessageContaining("not an envelope");
    }

    // ---- cancelled: nothing written, except that a sign may be cancelled after its write ---------

    @Test
    void suspend_answeredCancelled_mayFollowTheSigningWrite_isUncertain_notRepeated_exportRecovers(@TempDir Path tmp)
            throws Exception {
        // wire-format e.4: a helper may answer a sign with cancellation after the signing write.
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        boolean[] cancel = {true};
        try (FakeHelper h = FakeHelper.unix(sock, r -> cancel[0] && r.line().equals("POST /v1/runs/run-1/snapshots")
                ? FakeHelper.problem(503, "cancelled", "sign run-1: cancelled")
                : helper(r))) {
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock))
                    .retry(new RetryPolicy(4, java.time.Duration.ofMillis(1), java.time.Duration.ofMillis(2))).build();
            Engine engine = Engine.builder(Authorities.of(client, client.openSession()), ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(ledger, null))))
                    .identity(ScriptedAgent.IDENTITY).build();
            Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                assertThat(e.uncertain()).as("the helper may have signed SUSPENDED").isTrue();
                assertThat(e.getCause()).isInstanceOfSatisfying(spice.authority.host.HelperProblem.Cancelled.class,
                        c -> assertThat(c.nothingHappened()).isFalse());
            });
            assertThat(h.requests()).extracting(FakeHelper.Request::line)
                    .as("a cancelled sign is not repeated by the client").filteredOn(l -> l.endsWith("/snapshots")).hasSize(1);
            assertThat(run.phase()).as("never continues").isEqualTo(Run.Phase.SUSPENDED);
            assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
            assertThat(lines(ledger)).hasSize(1);
            cancel[0] = false;
            assertThat(Envelope.parse(run.export()).lastSequence()).isEqualTo(run.events().head());
        }
    }

    @Test
    void importConsume_answeredCancelled_isARefusalNothingConsumed_andTheImportMayBeTriedAgain(@TempDir Path tmp)
            throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope = suspendedElsewhere(sock, tmp);
        boolean[] cancel = {true};
        try (FakeHelper h = FakeHelper.unix(sock, r -> cancel[0] && r.line().equals("POST /v1/imports/imp-1/consume")
                ? FakeHelper.problem(503, "cancelled", "consume run-x: cancelled before anything was written; safe to retry")
                : helper(r))) {
            Engine b = engine(sock, tmp.resolve("ledger-b"));
            assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class, e -> {
                assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.CONSUME_REFUSED);
                assertThat(e.helperCode()).isEqualTo("cancelled");
            });
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/imports/imp-1");
            cancel[0] = false;
            Run run = b.importRun(envelope);
            assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);
        }
    }

    // ---- a terminal whose first sign may have been written stays uncertain ----------------------

    @Test
    void complete_firstSignUncertain_repeatRefused_staysUncertain(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        int[] signs = {0};
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            if (!r.line().equals("POST /v1/runs/run-1/snapshots")) {
                return helper(r);
            }
            // The first terminal sign: outcome unknown; the repeat: the lease ended with the tombstone.
            return ++signs[0] == 1 ? FakeHelper.problem(500, "uncertain", "the write's outcome is unknown")
                    : FakeHelper.problem(409, "state_conflict", "run run-1 is not owned by this session");
        })) {
            Run run = engine(sock, tmp.resolve("ledger")).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThatThrownBy(run::complete).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).isTrue());
            assertThat(run.phase()).isEqualTo(Run.Phase.COMPLETED);
            assertThatThrownBy(run::export).isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                assertThat(e.failure()).isInstanceOf(spice.authority.host.HelperProblem.StateConflict.class);
                assertThat(e.uncertain()).as("the first sign may have written the tombstone").isTrue();
            });
            assertThat(signs[0]).isEqualTo(2);
        }
    }

    @Test
    void complete_firstSignRefusedNothingWritten_exportSignsItThen(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        int[] signs = {0};
        try (FakeHelper h = FakeHelper.unix(sock, r -> r.line().equals("POST /v1/runs/run-1/snapshots") && ++signs[0] == 1
                ? FakeHelper.problem(503, "unavailable", "nothing was written") : helper(r))) {
            Run run = engine(sock, tmp.resolve("ledger")).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThatThrownBy(run::complete).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).isFalse());
            assertThat(Envelope.parse(run.export()).lastSequence()).isEqualTo(run.events().head());
        }
    }

    // ---- a code this client does not know has an unknown effect ---------------------------------

    @Test
    void suspend_answeredWithAnUnknownCode_isUncertain_runNeverContinues(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        boolean[] fail = {true};
        try (FakeHelper h = FakeHelper.unix(sock, r -> fail[0] && r.line().equals("POST /v1/runs/run-1/snapshots")
                ? FakeHelper.problem(500, "write_interrupted", "a newer helper's code") : helper(r))) {
            Run run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).as("the helper may have signed SUSPENDED").isTrue());
            assertThat(run.phase()).isEqualTo(Run.Phase.SUSPENDED);
            assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
            assertThat(lines(ledger)).hasSize(1);
            fail[0] = false;
            assertThat(Envelope.parse(run.export()).lastSequence()).isEqualTo(run.events().head());
        }
    }

    @Test
    void importConsume_answeredWithAnUnknownCode_isUncertain_notARefusal(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope = suspendedElsewhere(sock, tmp);
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/imports/imp-1/consume",
                FakeHelper.problem(500, "write_interrupted", "a newer helper's code")))) {
            Engine b = engine(sock, tmp.resolve("ledger-b"));
            assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOf(ImportUncertainException.class);
            // Never retried: the run ID stays reserved in this engine.
            assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                    e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.ALREADY_IMPORTED));
            assertThat(h.requests()).extracting(FakeHelper.Request::line)
                    .filteredOn(l -> l.endsWith("/consume")).hasSize(1);
        }
    }

    // ---- a lost answer that may have taken effect hands the lease back -----------------------------

    @Test
    void start_answerLost_theLeaseIsHandedBack_soTheRunCanBeAbandonedNow(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        // The helper started the run and leased it to the session, but its answer never came.
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs", new byte[0]))) {
            Engine engine = engine(sock, tmp.resolve("ledger"));
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                        assertThat(e.uncertain()).isTrue();
                        assertThat(e.getMessage()).contains("was lost").contains("ACTIVE with no owner")
                                .contains("runs abandon run-1");
                    });
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/runs/run-1/lease");
        }
    }

    /** A decorating Authority that throws after the helper started the run: as a lost answer, the lease goes back. */
    @Test
    void start_decoratorThrowsAfterTheHelperStarted_theLeaseIsHandedBack(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            Authority throwing = new ForwardingAuthority(authorityOf(sock)) {
                @Override
                public void start(String runId) throws IOException {
                    super.start(runId);
                    throw new IllegalStateException("decorator bug");
                }
            };
            Engine engine = Engine.builder(throwing, ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes())))
                    .identity(ScriptedAgent.IDENTITY).build();
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOfSatisfying(AuthorityFailedException.class, e -> assertThat(e.uncertain()).isTrue());
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/runs/run-1/lease");
        }
    }

    /**
     * A local resume whose answer was lost: ACTIVE at the next generation may be durable or not, a
     * second resume is refused either way, and the session would otherwise hold the lease (so no
     * abandon, and no import of a still valid envelope) until it ends. The lease goes back, the
     * message says how to tell which it was, and the run is never resumed here.
     */
    @Test
    void resumeLocal_answerLost_theLeaseIsHandedBack_andItIsNotResumedHere(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        // The resume is lost, and the helper's view cannot show it taken effect (SUSPENDED once signed).
        Function<FakeHelper.Request, byte[]> answers = suspendedOnceSigned(r -> r.line().equals("POST /v1/runs/run-1/resume")
                ? new byte[0] : helper(r));
        try (FakeHelper h = FakeHelper.unix(sock, answers)) {
            Run run = suspended(engine(sock, tmp.resolve("ledger")));
            assertThatThrownBy(run::resumeLocal).isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                assertThat(e.uncertain()).isTrue();
                assertThat(e.getMessage()).contains("resume of run run-1 was lost").contains("handed back")
                        .contains("runs show run-1").contains("runs abandon run-1");
            });
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/runs/run-1/lease");
            assertThat(run.phase()).isEqualTo(Run.Phase.SUSPENDED);
            long resumes = h.requests().stream().filter(r -> r.line().endsWith("/resume")).count();
            assertThatThrownBy(run::resumeLocal).isInstanceOf(RunStateException.class).hasMessageContaining("lost");
            assertThat(h.requests().stream().filter(r -> r.line().endsWith("/resume")).count())
                    .as("never asked again").isEqualTo(resumes);
        }
    }

    /** A lost resume answer the helper's view shows taken effect (ACTIVE, owned): the run goes on. */
    @Test
    void resumeLocal_answerLost_butTheHelperShowsItActiveAndOwned_goesOn(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs/run-1/resume", new byte[0]))) {
            Run run = suspended(engine(sock, tmp.resolve("ledger")));
            run.resumeLocal();
            assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);
            assertThat(h.requests()).extracting(FakeHelper.Request::line).doesNotContain("DELETE /v1/runs/run-1/lease");
            run.runTurn();
        }
    }

    @Test
    void resumeLocal_answerLost_helperUncertain_saysItIsFencedUntilItRestarts(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Function<FakeHelper.Request, byte[]> answers = suspendedOnceSigned(r -> r.line().equals("POST /v1/runs/run-1/resume")
                ? FakeHelper.problem(500, "uncertain", "the write's outcome is unknown") : helper(r));
        try (FakeHelper h = FakeHelper.unix(sock, answers)) {
            Run run = suspended(engine(sock, tmp.resolve("ledger")));
            assertThatThrownBy(run::resumeLocal).isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                assertThat(e.uncertain()).isTrue();
                assertThat(e.getMessage()).contains("fenced until it restarts").contains("runs show run-1");
            });
            assertThatThrownBy(run::resumeLocal).isInstanceOf(RunStateException.class);
        }
    }

    @Test
    void resumeLocal_refusedWithNothingWritten_keepsTheLease_andMayBeAskedAgain(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        java.util.concurrent.atomic.AtomicInteger resumes = new java.util.concurrent.atomic.AtomicInteger();
        Function<FakeHelper.Request, byte[]> answers = r -> r.line().equals("POST /v1/runs/run-1/resume")
                && resumes.getAndIncrement() == 0 ? FakeHelper.problem(503, "unavailable", "authority directory refused, nothing written")
                : helper(r);
        try (FakeHelper h = FakeHelper.unix(sock, answers)) {
            Run run = suspended(engine(sock, tmp.resolve("ledger")));
            assertThatThrownBy(run::resumeLocal).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).isFalse());
            assertThat(h.requests()).extracting(FakeHelper.Request::line).doesNotContain("DELETE /v1/runs/run-1/lease");
            run.resumeLocal();
            assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);
        }
    }

    /**
     * The helper restarted (or the operator abandoned the run) during a turn: before the tool
     * round's calls, the helper shows the run owned by no session, so the run stops and no tool
     * runs; a helper that cannot be asked (here: a 503) proves nothing and the round goes on.
     */
    @Test
    void leaseGoneAtTheHelper_runStopsBeforeItsToolCalls(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        try (FakeHelper h = FakeHelper.unix(sock, except("GET /v1/runs/run-1",
                run("run-1", "ACTIVE", 1, false)))) {
            Engine engine = engine(sock, ledger);
            Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
            assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class)
                    .hasMessageContaining("owned by no session").hasMessageContaining("no longer holds its lease");
            assertThat(run.phase()).isEqualTo(Run.Phase.STOPPED);
            assertThat(lines(ledger)).as("no tool ran").isEmpty();
        }
        for (byte[] answer : List.of(run("run-1", "CANCELLED", 1, false),
                FakeHelper.problem(404, "not_found", "no run run-1"))) {
            try (FakeHelper h = FakeHelper.unix(sock, except("GET /v1/runs/run-1", answer))) {
                Engine engine = engine(sock, ledger);
                Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
                assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
                assertThat(lines(ledger)).isEmpty();
            }
        }
        try (FakeHelper h = FakeHelper.unix(sock, except("GET /v1/runs/run-1",
                FakeHelper.problem(503, "unavailable", "the directory cannot be read")))) {
            Engine engine = engine(sock, ledger);
            Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThat(lines(ledger)).as("not proven lost: the round went on").isNotEmpty();
        }
    }

    @Test
    void start_answerLost_noLeaseToHandBack_saysSo(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        // The start never took effect: the session holds no lease of the run (what the helper answers).
        Function<FakeHelper.Request, byte[]> answers = r -> r.line().equals("POST /v1/runs") ? new byte[0]
                : r.line().startsWith("DELETE /v1/runs/") ? FakeHelper.problem(409, "state_conflict",
                        "this session holds no lease of run run-1")
                : helper(r);
        try (FakeHelper h = FakeHelper.unix(sock, answers)) {
            Engine engine = engine(sock, tmp.resolve("ledger"));
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                        assertThat(e.uncertain()).isTrue();
                        assertThat(e.getMessage()).contains("this session held no lease of it when asked")
                                .doesNotContain("ACTIVE with no owner");
                    });
        }
    }

    @Test
    void start_refused_handsNothingBack(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs",
                FakeHelper.problem(409, "state_conflict", "run-1 exists")))) {
            Engine engine = engine(sock, tmp.resolve("ledger"));
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOfSatisfying(AuthorityFailedException.class, e -> assertThat(e.uncertain()).isFalse());
            assertThat(h.requests()).extracting(FakeHelper.Request::line).noneMatch(l -> l.startsWith("DELETE"));
        }
    }

    @Test
    void importActivate_answerLost_theLeaseIsHandedBack_andTheRunNeverExecutes(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope = suspendedElsewhere(sock, tmp);
        // The activate took effect, its answer was lost; the helper then refuses the abort (the run is
        // ACTIVE with this session's lease) and releases the lease.
        Function<FakeHelper.Request, byte[]> answers = r -> r.line().equals("POST /v1/imports/imp-1/activate") ? new byte[0]
                : r.line().equals("DELETE /v1/imports/imp-1") ? FakeHelper.problem(409, "state_conflict",
                        "the import was already activated")
                : helper(r);
        try (FakeHelper h = FakeHelper.unix(sock, answers)) {
            Engine b = engine(sock, tmp.resolve("ledger-b"));
            assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportUncertainException.class,
                    e -> assertThat(e.getMessage()).contains("ACTIVE with no owner").contains("runs abandon run-x"));
            assertThat(h.requests()).extracting(FakeHelper.Request::line).filteredOn(l -> l.contains("imp-1/activate")
                    || l.startsWith("DELETE")).containsExactly("POST /v1/imports/imp-1/activate", "DELETE /v1/imports/imp-1",
                    "DELETE /v1/runs/run-x/lease");
            assertThat(lines(tmp.resolve("ledger-b"))).isEmpty();
        }
    }

    @Test
    void importPrepare_answerLost_isAskedAgain_andTheImportGoesOn(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope = suspendedElsewhere(sock, tmp);
        // The helper prepared the import, but its answer was lost; asked again by the same session
        // with the identical envelope, it answers with the import it holds.
        boolean[] lose = {true};
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            if (lose[0] && r.line().equals("POST /v1/imports")) {
                lose[0] = false;
                return new byte[0];
            }
            return helper(r);
        })) {
            Engine b = engine(sock, tmp.resolve("ledger-b"));
            Run run = b.importRun(envelope);
            run.runTurn();
            assertThat(run.completedTurns()).isEqualTo(2);
            assertThat(h.requests()).extracting(FakeHelper.Request::line).filteredOn(l -> l.startsWith("POST /v1/imports"))
                    .containsExactly("POST /v1/imports", "POST /v1/imports", "POST /v1/imports/imp-1/consume",
                            "POST /v1/imports/imp-1/activate");
        }
    }

    @Test
    void importRun_twiceAtOnceInOneEngine_theSecondIsRefusedBeforeItPrepares(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope = suspendedElsewhere(sock, tmp);
        java.util.concurrent.CountDownLatch preparing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            if (r.line().equals("POST /v1/imports")) {
                preparing.countDown();
                try {
                    answer.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return helper(r);
        })) {
            Engine b = engine(sock, tmp.resolve("ledger-b"));
            java.util.concurrent.CompletableFuture<Run> first = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return b.importRun(envelope);
                } catch (EngineException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            assertThat(preparing.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                    e -> {
                        assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.IMPORT_IN_PROGRESS);
                        assertThat(e.getMessage()).contains("already under way");
                    });
            answer.countDown();
            Run run = first.get(10, java.util.concurrent.TimeUnit.SECONDS);
            run.runTurn();
            assertThat(h.requests()).extracting(FakeHelper.Request::line).filteredOn(l -> l.equals("POST /v1/imports"))
                    .hasSize(1);
        }
    }

    /**
     * Imports run-x through a helper whose answers to {@code POST /v1/imports} come, in turn, from
     * {@code prepares} (the last one repeated); expects a refusal and returns it with the number of
     * prepares the engine sent.
     */
    private static java.util.Map.Entry<ImportRefusedException, Long> prepareRefused(Path tmp, byte[]... prepares)
            throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope = suspendedElsewhere(sock, tmp);
        int[] n = {0};
        try (FakeHelper h = FakeHelper.unix(sock, r -> r.line().equals("POST /v1/imports")
                ? prepares[Math.min(n[0]++, prepares.length - 1)] : helper(r))) {
            Engine b = engine(sock, tmp.resolve("ledger-b"));
            ImportRefusedException refused = org.assertj.core.api.Assertions.catchThrowableOfType(ImportRefusedException.class,
                    () -> b.importRun(envelope));
            assertThat(refused).isNotNull();
            return java.util.Map.entry(refused, h.requests().stream().filter(r -> r.line().equals("POST /v1/imports")).count());
        }
    }

    @Test
    void importPrepare_firstAnswerLost_thenRefused_saysTheImportMayBeHeld(@TempDir Path tmp) throws Exception {
        var r = prepareRefused(tmp, new byte[0], FakeHelper.problem(409, "busy", "the run is locked"));
        assertThat(r.getKey().getMessage()).contains("was lost").contains("until this session ends");
        assertThat(r.getValue()).isEqualTo(2);
    }

    @Test
    void importPrepare_answerLostTwice_isARefusalThatSaysSo(@TempDir Path tmp) throws Exception {
        var r = prepareRefused(tmp, new byte[0]);
        assertThat(r.getKey().getMessage()).contains("was lost").contains("until this session ends");
        assertThat(r.getValue()).isEqualTo(2);
    }

    @Test
    void importPrepare_refused_isNotAskedAgain(@TempDir Path tmp) throws Exception {
        var r = prepareRefused(tmp, FakeHelper.problem(409, "busy", "the owner is alive"));
        assertThat(r.getKey().getMessage()).contains("refused").doesNotContain("was lost");
        assertThat(r.getValue()).isEqualTo(1);
    }

    @Test
    void start_answerLost_andTheReleaseThrows_staysAnUncertainAuthorityFailure(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs", new byte[0]))) {
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Authority failingRelease = new ForwardingAuthority(Authorities.of(client, client.openSession())) {
                @Override
                public void release(String runId) {
                    throw new IllegalStateException("a decorator's bug");
                }
            };
            Engine engine = Engine.builder(failingRelease, ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(),
                            ScriptedAgent.appendLedger(tmp.resolve("ledger"), null))))
                    .identity(ScriptedAgent.IDENTITY).build();
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                        assertThat(e.uncertain()).isTrue();
                        assertThat(e.getMessage()).contains("whether this session holds its lease is unknown");
                    });
            // The run ID stays reserved: the start may have taken effect.
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOf(EngineException.class).hasMessageContaining("already started");
        }
    }

    // ---- last_sequence: above 2^63 imports; too near the end is refused before consume ----------

    @Test
    void import_lastSequenceAbove2pow63_isCommittedAndRuns_notAnUncheckedFailureAfterConsume(@TempDir Path tmp) throws Exception {
        importAt(tmp, "9223372036854775808", true);
    }

    @Test
    void import_atTheHighestImportedSequence_isCommittedAndRuns(@TempDir Path tmp) throws Exception {
        importAt(tmp, Long.toUnsignedString(Engine.MAX_IMPORTED_SEQUENCE), true);
    }

    @Test
    void import_tooNearTheEndOfTheSequenceSpace_isRefusedBeforeConsume_nothingChanges(@TempDir Path tmp) throws Exception {
        // P-SEQ allows up to 2^64-2; taken, the run would exhaust its events in the middle of a turn.
        importAt(tmp, "18446744073709551614", false);
        importAt(tmp, Long.toUnsignedString(Engine.MAX_IMPORTED_SEQUENCE + 1), false);
    }

    /** The envelope of run-x, suspended after one turn by another engine (host A, which then goes). */
    private static byte[] suspendedElsewhere(Path sock, Path tmp) throws Exception {
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            Run first = engine(sock, tmp.resolve("ledger-a")).start("run-x", ScriptedAgent.DEFINITION, "hello");
            first.runTurn();
            return first.suspend();
        }
    }

    private static void importAt(Path tmp, String lastSequence, boolean accepted) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope;
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            Run first = engine(sock, tmp.resolve("ledger-a")).start("run-x", ScriptedAgent.DEFINITION, "hello");
            first.runTurn();
            Snapshot s = Snapshot.decode(Envelope.parse(first.suspend()).payload());
            // A valid payload (P-SEQ: 1..2^64-2) at the given last_sequence, unsigned.
            Snapshot.Builder b = Snapshot.builder().runId(s.runId()).definition(s.definition()).completedTurns(s.completedTurns())
                    .planIdentity(s.planIdentity()).seenInteractionIds(s.seenInteractionIds())
                    .lastSequence(Long.parseUnsignedLong(lastSequence)).status(s.status());
            s.history().forEach(b::addMessage);
            envelope = Envelopes.unsigned(b.build()).seal(CLAIM).toBinary();
        }
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(tmp.resolve("ledger-b"), null)));
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Engine b = Engine.builder(Authorities.of(client, client.openSession()), ScriptedAgent.model(), plan)
                    .identity(ScriptedAgent.IDENTITY).build();
            if (!accepted) {
                assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.SEQUENCE_SPACE);
                    assertThat(e.getMessage()).contains(lastSequence);
                });
                assertThat(h.requests()).extracting(FakeHelper.Request::line).as("aborted, never consumed")
                        .contains("DELETE /v1/imports/imp-1").noneMatch(l -> l.endsWith("/consume"));
                assertThat(plan.liveLeases()).isZero();
                return;
            }
            Run run = b.importRun(envelope);
            assertThat(run.events().head()).isEqualTo(Long.parseUnsignedLong(lastSequence) + 1);
            run.runTurn();
            assertThat(run.completedTurns()).isEqualTo(2);
            assertThat(plan.liveLeases()).isEqualTo(1);
        }
    }

    // ---- a suspended run stays exportable after its engine closed -------------------------------

    @Test
    void suspendAnswerLost_thenEngineClosed_exportStillRecoversTheEnvelope(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        boolean[] lose = {true};
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            byte[] answer = helper(r);
            if (lose[0] && r.line().equals("POST /v1/runs/run-1/snapshots")) {
                lose[0] = false;
                return new byte[0]; // signed, but the answer is lost: the connection closes without one
            }
            return answer;
        })) {
            Engine engine = engine(sock, tmp.resolve("ledger"));
            Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            assertThatThrownBy(run::suspend).isInstanceOfSatisfying(AuthorityFailedException.class,
                    e -> assertThat(e.uncertain()).isTrue());
            // The host shuts its engine down: the run is SUSPENDED at the helper and importable once
            // this process is gone, but only with its envelope, which only this run can still ask for.
            engine.close();
            byte[] envelope = run.export();
            assertThat(Envelope.parse(envelope).lastSequence()).isEqualTo(run.events().head());
            assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
            assertThatThrownBy(run::resumeLocal).isInstanceOf(RunStateException.class);

            Run other = engine(sock, tmp.resolve("ledger-2")).start("run-2", ScriptedAgent.DEFINITION, "hello");
            other.runTurn();
            byte[] signed = other.suspend();
            other.stopAndJoin();
            assertThat(other.export()).isEqualTo(signed);
        }
    }
}
