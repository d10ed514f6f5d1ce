package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.ImportView;
import spice.authority.host.Session;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Authority;
import spice.authority.host.engine.CursorOutOfRangeException;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineIdentity;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.ExportRefusedException;
import spice.authority.host.engine.ForwardingAuthority;
import spice.authority.host.engine.ImportRefusedException;
import spice.authority.host.engine.ImportUncertainException;
import spice.authority.host.engine.Model;
import spice.authority.host.engine.Run;
import spice.authority.host.engine.RunStateException;
import spice.authority.host.engine.StaticToolPlan;
import spice.authority.host.engine.Tool;
import spice.authority.host.engine.ToolPlanSource;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.plan.ToolDefinition;

/**
 * The host rules of RFC 0007, each through the reference engine against a real helper process.
 * The first host "dies" by closing its session (the helper then treats its runs as orphans, as
 * after a process death); the rules about processes run in real host JVMs in {@link DemoIT}.
 */
class HostEngineIT {
    private Path root;
    private HelperProcess helper;
    private AuthorityClient client;
    private final List<Session> sessions = new ArrayList<>();
    private Path ledger;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-engine-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("authority.sock"));
        client = AuthorityClient.builder(new HelperEndpoint.Unix(helper.socket)).build();
        ledger = root.resolve("ledger.txt");
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (Session s : sessions) {
                try {
                    client.closeSession(s);
                } catch (IOException ignored) {
                    // already closed by the test
                }
            }
            if (helper != null) {
                helper.close();
            }
        } finally {
            // Also when the helper never started: no temporary directory is left behind.
            if (root != null) {
                HelperProcess.deleteTree(root);
            }
        }
    }

    private Authority authority() throws IOException {
        Session s = client.openSession();
        sessions.add(s);
        return Authority.of(client, s);
    }

    private Session lastSession() {
        return sessions.get(sessions.size() - 1);
    }

    private static List<Tool> tools(Path ledger) {
        return List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(ledger, null));
    }

    private Engine engine(Authority a, ToolPlanSource plans) {
        return Engine.builder(a, ScriptedAgent.model(), plans).identity(ScriptedAgent.IDENTITY).build();
    }

    /** Host A: a run of two turns, suspended; then A is gone (its session closed). Returns the envelope. */
    private byte[] suspendedByDeadHost(String runId) throws Exception {
        Authority a = authority();
        Engine engine = engine(a, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)));
        Run run = engine.start(runId, ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        run.runTurn();
        byte[] envelope = run.suspend();
        client.closeSession(lastSession());
        return envelope;
    }

    private static Tool withSchema(Tool t, String schema) {
        ToolDefinition d = t.definition();
        ToolDefinition changed = new ToolDefinition(d.name(), d.description(), schema.getBytes(StandardCharsets.UTF_8),
                d.effect(), d.replaySafety(), d.capabilities());
        return Tool.of(changed, t::call);
    }

    // ---- the recorded plan is leased and the plan identity recomputed ----------------------------

    @Test
    void import_changedToolDefinitionUnderSamePlanId_refusedLeaseReleasedNothingChanged() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-changed");
        StaticToolPlan changed = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                List.of(withSchema(ScriptedAgent.readNotes(), "{\"type\":\"object\"}"), ScriptedAgent.appendLedger(ledger, null)));
        Engine b = engine(authority(), changed);

        assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.PLAN_CHANGED));
        assertThat(changed.liveLeases()).isZero();
        assertThat(b.run("run-changed")).isNull();
        // Nothing changed at the helper: the import was aborted before consume, and the right plan imports.
        assertThat(client.run("run-changed").phase()).isEqualTo(RunPhase.SUSPENDED);
        StaticToolPlan right = StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger));
        Run resumed = engine(authority(), right).importRun(envelope);
        assertThat(resumed.phase()).isEqualTo(Run.Phase.RUNNING);
        assertThat(right.liveLeases()).isEqualTo(1);
    }

    @Test
    void import_otherPlanId_refusedAsMissing() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-missing");
        StaticToolPlan other = StaticToolPlan.named("demo-generation-2", tools(ledger));
        Engine b = engine(authority(), other);

        assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.PLAN_MISSING));
        assertThat(other.liveLeases()).isZero();
        assertThat(client.run("run-missing").phase()).isEqualTo(RunPhase.SUSPENDED);
    }

    @Test
    void import_sourceSubstitutesAnotherPlan_refusedAndThatLeaseReleased() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-substituted");
        StaticToolPlan substitute = StaticToolPlan.named("generation-8", tools(ledger));
        ToolPlanSource lying = new ToolPlanSource() {
            @Override
            public String currentPlanId() {
                return "generation-8";
            }

            @Override
            public Lease lease(String toolPlanId) throws PlanUnavailableException {
                return substitute.lease("generation-8");
            }
        };
        Engine b = engine(authority(), lying);

        assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.PLAN_SUBSTITUTED));
        assertThat(substitute.liveLeases()).isZero();
        assertThat(client.run("run-substituted").phase()).isEqualTo(RunPhase.SUSPENDED);
    }

    // ---- resume continues the sequence; old cursors recover ---------------------------------------

    @Test
    void import_continuesAtLastSequencePlusOne_noSecondRunStarted_runScopedIds() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-seq");
        List<Event> seen = new ArrayList<>();
        List<String> operations = new ArrayList<>();
        Model recording = request -> {
            operations.add(request.operationId());
            return ScriptedAgent.model().respond(request);
        };
        Engine b = Engine.builder(authority(), recording, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)))
                .identity(ScriptedAgent.IDENTITY).listener(seen::add).build();

        Run run = b.importRun(envelope);
        long last = spice.authority.snapshot.envelope.Envelope.parse(envelope).lastSequence();
        run.runTurn();
        run.runTurn();
        run.complete();

        assertThat(seen.get(0).type()).isEqualTo(Event.Type.RUN_RESUMED);
        assertThat(seen.get(0).sequence()).isEqualTo(last + 1);
        assertThat(seen).extracting(Event::type).doesNotContain(Event.Type.RUN_STARTED);
        for (int i = 1; i < seen.size(); i++) {
            assertThat(seen.get(i).sequence()).isEqualTo(seen.get(i - 1).sequence() + 1);
        }
        assertThat(seen.get(1)).satisfies(e -> {
            assertThat(e.type()).isEqualTo(Event.Type.TURN_STARTED);
            assertThat(e.turn()).isEqualTo(3);
        });
        assertThat(operations).allMatch(op -> op.equals("run-seq/model/3") || op.equals("run-seq/model/4"));
        // Generated message IDs of the resumed run lie above the snapshot's sequence: never reused.
        assertThat(run.history()).filteredOn(m -> m.id().startsWith("run-seq/message/") && !m.id().endsWith("/user"))
                .filteredOn(m -> Long.parseLong(m.id().substring("run-seq/message/".length())) > last)
                .hasSize(8);
        assertThat(client.run("run-seq").phase()).isEqualTo(RunPhase.COMPLETED);
    }

    @Test
    void importedLog_oldCursorFailsWithSnapshotSequenceAsRecoveryCursor() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-cursor");
        long last = spice.authority.snapshot.envelope.Envelope.parse(envelope).lastSequence();
        Run run = engine(authority(), StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger))).importRun(envelope);

        for (long old : new long[] {0, 1, last - 1}) {
            assertThatThrownBy(() -> run.events().readAfter(old)).isInstanceOfSatisfying(CursorOutOfRangeException.class,
                    e -> assertThat(e.recoveryCursor()).isEqualTo(last));
        }
        assertThat(run.events().readAfter(last)).extracting(Event::sequence).containsExactly(last + 1);
        long head = run.events().head();
        assertThatThrownBy(() -> run.events().readAfter(head + 5)).isInstanceOfSatisfying(CursorOutOfRangeException.class,
                e -> assertThat(e.recoveryCursor()).isEqualTo(head));
        run.runTurn();
        assertThat(run.events().readAfter(last + 1)).isNotEmpty();
    }

    // ---- an uncertain activate stops and joins before the import is released -------------------

    @Test
    void uncertainActivate_runStoppedAndJoinedBeforeAbort_neverRunsWithoutLease() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-uncertain");
        Authority real = authority();
        AtomicReference<Engine> engineRef = new AtomicReference<>();
        List<String> order = new ArrayList<>();
        // A fake door: the helper activates, but the answer is lost on the way back.
        Authority lossy = new ForwardingAuthority(real) {
            @Override
            public void activate(ImportView tx) throws IOException {
                super.activate(tx);
                order.add("activate answered, answer lost");
                throw new IOException("injected: connection reset after the request was sent");
            }

            @Override
            public void abortImport(ImportView tx) throws IOException {
                order.add("abort with run " + engineRef.get().run(tx.runId()).phase());
                super.abortImport(tx);
            }
        };
        List<Event> events = new ArrayList<>();
        Engine b = Engine.builder(lossy, ScriptedAgent.model(), StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)))
                .identity(ScriptedAgent.IDENTITY).listener(events::add).build();
        engineRef.set(b);

        assertThatThrownBy(() -> b.importRun(envelope)).isInstanceOf(ImportUncertainException.class);
        assertThat(order).containsExactly("activate answered, answer lost", "abort with run STOPPED");
        Run run = b.run("run-uncertain");
        assertThat(run.phase()).isEqualTo(Run.Phase.STOPPED);
        assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
        assertThatThrownBy(run::suspend).isInstanceOf(ExportRefusedException.class);
        assertThat(events).isEmpty();
        assertThat(Files.exists(ledger) ? Files.readAllLines(ledger) : List.of()).hasSize(2); // turns 1-2 only
        // The activate had taken effect: the engine handed its lease back, so the run is ACTIVE with
        // no owner, and abandon ends it while the importing host still lives.
        assertThat(client.run("run-uncertain").owned()).isFalse();
        assertThat(client.abandon(lastSession(), "run-uncertain").phase()).isEqualTo(RunPhase.CANCELLED);
    }

    @Test
    void start_answerLost_leaseHandedBack_theRunCanBeAbandonedAtOnce() throws Exception {
        Authority lossy = new ForwardingAuthority(authority()) {
            @Override
            public void start(String runId) throws IOException {
                super.start(runId);
                throw new IOException("injected: connection reset after the request was sent");
            }
        };
        Engine engine = engine(lossy, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)));
        assertThatThrownBy(() -> engine.start("run-start-lost", ScriptedAgent.DEFINITION, "hello"))
                .isInstanceOfSatisfying(spice.authority.host.engine.AuthorityFailedException.class, e -> {
                    assertThat(e.uncertain()).isTrue();
                    assertThat(e.getMessage()).contains("ACTIVE with no owner");
                });
        assertThat(client.run("run-start-lost").phase()).isEqualTo(RunPhase.ACTIVE);
        assertThat(client.run("run-start-lost").owned()).isFalse();
        assertThat(client.abandon(lastSession(), "run-start-lost").phase()).isEqualTo(RunPhase.CANCELLED);
    }

    @Test
    void importPrepare_answerLost_askedAgain_getsTheSameImport_andTheRunGoesOn() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-prepare-lost");
        List<String> imports = new ArrayList<>();
        Authority lossy = new ForwardingAuthority(authority()) {
            @Override
            public ImportView prepareImport(byte[] env) throws IOException {
                ImportView tx = super.prepareImport(env);
                imports.add(tx.importId());
                if (imports.size() == 1) {
                    throw new IOException("injected: connection reset after the request was sent");
                }
                return tx;
            }
        };
        Run run = engine(lossy, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger))).importRun(envelope);
        assertThat(imports).hasSize(2).containsOnly(imports.get(0));
        run.runTurn();
        assertThat(client.run("run-prepare-lost").owned()).isTrue();
        assertThat(Files.readAllLines(ledger)).hasSize(3);
    }

    // ---- convenience engines export for inspection only --------------------------------------------

    @Test
    void convenienceEngine_suspendsResumesLocallyAndExports_butEveryImportIsRefused() throws Exception {
        Authority a = authority();
        StaticToolPlan plan = StaticToolPlan.of(tools(ledger));
        Engine convenience = Engine.builder(a, ScriptedAgent.model(), plan).build();
        assertThat(convenience.identity().importable()).isFalse();
        Run run = convenience.start("run-conv", ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        run.suspend();
        run.resumeLocal();
        run.runTurn();
        byte[] envelope = run.suspend();
        assertThat(run.export()).isEqualTo(envelope);
        assertThat(client.inspect(envelope).text()).containsPattern("\"importable_plan\" *: *false");
        client.closeSession(lastSession());

        Engine generated = engine(authority(), plan);
        assertThatThrownBy(() -> generated.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.NOT_IMPORTABLE));
        Engine otherConvenience = Engine.builder(authority(), ScriptedAgent.model(), plan).build();
        assertThatThrownBy(() -> otherConvenience.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.NOT_IMPORTABLE));
        assertThat(plan.liveLeases()).isEqualTo(1); // the first engine's own lease only
        assertThat(client.run("run-conv").phase()).isEqualTo(RunPhase.SUSPENDED);
    }

    @Test
    void otherCompatibilityIdentity_refusedBeforeAnyLease() throws Exception {
        byte[] envelope = suspendedByDeadHost("run-compat");
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger));
        Engine other = Engine.builder(authority(), ScriptedAgent.model(), plan)
                .identity(EngineIdentity.generated("another-agent/v1", ScriptedAgent.IDENTITY.compiledIdentities())).build();
        assertThatThrownBy(() -> other.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.INCOMPATIBLE));
        assertThat(plan.liveLeases()).isZero();
    }

    // ---- export only at a completed turn boundary ---------------------------------------------------

    @Test
    void export_refusedBeforeFirstTurn_whileActive_andMidTurn() throws Exception {
        Authority a = authority();
        AtomicReference<Run> self = new AtomicReference<>();
        List<Exception> midTurn = new ArrayList<>();
        Model exportingMidTurn = request -> {
            for (var attempt : List.<ThrowingCall>of(() -> self.get().suspend(), () -> self.get().export())) {
                try {
                    attempt.call();
                } catch (Exception e) {
                    midTurn.add(e);
                }
            }
            return new Model.Reply.Final("done");
        };
        Engine engine = Engine.builder(a, exportingMidTurn, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)))
                .identity(ScriptedAgent.IDENTITY).build();
        Run run = engine.start("run-export", ScriptedAgent.DEFINITION, "hello");
        self.set(run);
        assertThatThrownBy(run::suspend).isInstanceOf(ExportRefusedException.class); // no completed turn yet
        assertThatThrownBy(run::export).isInstanceOf(ExportRefusedException.class); // active
        run.runTurn();
        assertThat(midTurn).hasSize(2).allMatch(e -> e instanceof ExportRefusedException);
        assertThat(client.run("run-export").phase()).isEqualTo(RunPhase.ACTIVE);
        assertThat(run.suspend()).isNotEmpty();
        assertThat(client.run("run-export").phase()).isEqualTo(RunPhase.SUSPENDED);
    }

    @Test
    void sameEngine_neverImportsARunItStarted() throws Exception {
        Authority a = authority();
        Engine engine = engine(a, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)));
        Run run = engine.start("run-own", ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        byte[] envelope = run.suspend();
        a.release("run-own"); // the helper would now let this session import it: the engine must not
        assertThatThrownBy(() -> engine.importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class,
                e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.ALREADY_IMPORTED));
        assertThat(run.phase()).isEqualTo(Run.Phase.SUSPENDED);
        assertThat(client.run("run-own").phase()).isEqualTo(RunPhase.SUSPENDED); // the prepared import was aborted
    }

    @Test
    void toolRoundTheSnapshotCannotCarry_failsTheRunBeforeAnyToolRuns() throws Exception {
        Model badCallId = request -> new Model.Reply.ToolRound("", List.of(
                new Model.ToolCall("c".repeat(129), "append_ledger", JsonValue.of("{}")))); // P-CALL-ID: token(128)
        Engine engine = Engine.builder(authority(), badCallId, StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)))
                .identity(ScriptedAgent.IDENTITY).build();
        Run run = engine.start("run-bad-call", ScriptedAgent.DEFINITION, "hello");
        assertThatThrownBy(run::runTurn).isInstanceOf(spice.authority.host.engine.RunFailedException.class)
                .hasMessageContaining("cannot be recorded");
        assertThat(Files.exists(ledger)).isFalse(); // the mutating tool never ran
        assertThat(run.phase()).isEqualTo(Run.Phase.FAILED);
        assertThat(client.run("run-bad-call").phase()).isEqualTo(RunPhase.FAILED); // a clean terminal, no operator needed
    }

    @Test
    void start_invalidInput_refusedBeforeTheHelperHearsOfIt() throws Exception {
        Engine engine = engine(authority(), StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)));
        assertThatThrownBy(() -> engine.start("run-empty", ScriptedAgent.DEFINITION, "")).isInstanceOf(RunStateException.class);
        assertThatThrownBy(() -> client.run("run-empty")).isInstanceOf(spice.authority.host.HelperProblem.NotFound.class);
        Run run = engine.start("run-empty", ScriptedAgent.DEFINITION, "hello"); // the ID was not burned
        assertThat(run.phase()).isEqualTo(Run.Phase.RUNNING);
    }

    @Test
    void suspend_answerLost_runStaysSuspended_exportGetsTheSameEnvelope() throws Exception {
        Authority real = authority();
        List<byte[]> signed = new ArrayList<>();
        Authority lossy = new ForwardingAuthority(real) {
            private boolean lost;

            @Override
            public byte[] sign(String runId, byte[] payload) throws IOException {
                byte[] envelope = super.sign(runId, payload);
                signed.add(envelope);
                if (!lost) {
                    lost = true;
                    throw new IOException("injected: connection reset after the request was sent");
                }
                return envelope;
            }
        };
        Engine engine = Engine.builder(lossy, ScriptedAgent.model(), StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger)))
                .identity(ScriptedAgent.IDENTITY).build();
        Run run = engine.start("run-lost", ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        assertThatThrownBy(run::suspend).isInstanceOfSatisfying(spice.authority.host.engine.AuthorityFailedException.class,
                e -> assertThat(e.uncertain()).isTrue());
        assertThat(run.phase()).isEqualTo(Run.Phase.SUSPENDED);
        assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
        byte[] again = run.export();
        assertThat(again).isEqualTo(signed.get(0));
        assertThat(spice.authority.snapshot.envelope.Envelope.parse(again).lastSequence()).isEqualTo(run.events().head());
    }

    @Test
    void sessionLost_suspendRefused_runStops_noToolRunsAgain() throws Exception {
        Authority a = authority();
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger));
        Run run = engine(a, plan).start("run-orphaned", ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        // The helper ends the session (as after a restart, or the session's close): the run is an orphan.
        client.closeSession(lastSession());
        assertThat(client.run("run-orphaned").owned()).isFalse();

        assertThatThrownBy(run::suspend).isInstanceOfSatisfying(spice.authority.host.engine.AuthorityFailedException.class,
                e -> assertThat(e.uncertain()).isFalse());
        assertThat(run.phase()).isEqualTo(Run.Phase.STOPPED);
        assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
        assertThat(Files.readAllLines(ledger)).hasSize(1); // turn 1 only: nothing ran without the lease
        assertThat(plan.liveLeases()).isZero();
        assertThat(client.run("run-orphaned").phase()).isEqualTo(RunPhase.ACTIVE); // the operator's to abandon
    }

    @Test
    void start_refusedByHelper_isNotUncertain_andDoesNotBurnTheRunId() throws Exception {
        Authority first = authority();
        first.start("run-taken");
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger));
        Engine engine = engine(authority(), plan);
        for (int attempt = 0; attempt < 2; attempt++) {
            assertThatThrownBy(() -> engine.start("run-taken", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOfSatisfying(spice.authority.host.engine.AuthorityFailedException.class,
                            e -> assertThat(e.uncertain()).isFalse());
        }
        assertThat(plan.liveLeases()).isZero();
        assertThat(engine.run("run-taken")).isNull();
    }

    @Test
    void stopAndJoin_fromAnotherThread_waitsForTheTurnInProgress_thenNothingRuns() throws Exception {
        java.util.concurrent.CountDownLatch inModel = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Model slow = request -> {
            inModel.countDown();
            release.await();
            return ScriptedAgent.model().respond(request);
        };
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID, tools(ledger));
        Engine engine = Engine.builder(authority(), slow, plan).identity(ScriptedAgent.IDENTITY).build();
        Run run = engine.start("run-stop", ScriptedAgent.DEFINITION, "hello");
        java.util.concurrent.atomic.AtomicReference<Throwable> turnFailure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread turn = Thread.ofPlatform().start(() -> {
            try {
                run.runTurn();
            } catch (Throwable e) {
                turnFailure.set(e);
            }
        });
        inModel.await();
        Thread stopper = Thread.ofPlatform().start(run::stopAndJoin);
        stopper.join(300);
        assertThat(stopper.isAlive()).as("stopAndJoin waits for the turn in progress").isTrue();
        release.countDown();
        stopper.join(10_000);
        turn.join(10_000);
        assertThat(stopper.isAlive()).isFalse();
        assertThat(turnFailure.get()).isInstanceOf(RunStateException.class);
        assertThat(run.phase()).isEqualTo(Run.Phase.STOPPED);
        assertThat(Files.exists(ledger) ? Files.readAllLines(ledger) : List.of()).isEmpty(); // no tool ran after the stop
        assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
        assertThat(plan.liveLeases()).isZero();
    }

    @FunctionalInterface
    private interface ThrowingCall {
        void call() throws Exception;
    }
}
