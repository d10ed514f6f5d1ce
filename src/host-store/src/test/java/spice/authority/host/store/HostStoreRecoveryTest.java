package spice.authority.host.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.CursorOutOfRangeException;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineIdentity;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.Run;
import spice.authority.host.store.RecoveryDecision.Outcome;
import spice.authority.host.store.RecoveryDecision.Reason;

/**
 * Recording and recovery through the real engine and client against a helper with state: a
 * restarted host with nothing but its store resumes every suspended run exactly once, reports a
 * run cut off inside a tool call, and refuses each restore hazard with its reason.
 */
class HostStoreRecoveryTest {

    @Test
    void events_checkpoints_and_operations_are_recorded(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp); HostStore store = HostStore.open(f.storeDir("s").resolve("host.db"));
             Engine engine = f.engine(store)) {
            Run run = engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            byte[] envelope = run.suspend();
            // The envelope's own commit was not synced (it is re-issuable); every later one is.
            assertThat(Schema.pragma(store.db(), "synchronous")).isEqualTo("2");
            Inspection i = Inspection.of(store.file());
            assertThat(i.runs()).singleElement().satisfies(r -> {
                assertThat(r.runId()).isEqualTo("run-1");
                assertThat(r.phase()).isEqualTo("SUSPENDED");
                assertThat(r.lastSequence()).isEqualTo(run.events().head());
                assertThat(r.openToolCalls()).isEmpty();
                assertThat(r.checkpoints()).singleElement().satisfies(c -> {
                    assertThat(c.state()).isEqualTo("signed");
                    assertThat(c.sequence()).isEqualTo(run.events().head());
                });
            });
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + store.file());
                 Statement s = c.createStatement()) {
                try (ResultSet r = s.executeQuery("SELECT count(*), min(sequence), max(sequence) FROM events")) {
                    r.next();
                    assertThat(r.getLong(1)).isEqualTo(run.events().head());
                    assertThat(r.getLong(2)).isEqualTo(1);
                }
                try (ResultSet r = s.executeQuery("SELECT call_id, effect, replay_safety, terminal_kind FROM tool_operations "
                        + "ORDER BY start_sequence")) {
                    r.next();
                    assertThat(r.getString(1)).isEqualTo("t1-read");
                    assertThat(r.getString(2)).isEqualTo("read_only");
                    r.next();
                    assertThat(r.getString(1)).isEqualTo("t1-write");
                    assertThat(r.getString(2)).isEqualTo("mutating");
                    assertThat(r.getString(3)).isEqualTo("unsafe");
                    assertThat(r.getString(4)).isEqualTo("completed");
                }
                try (ResultSet r = s.executeQuery("SELECT envelope FROM checkpoints")) {
                    r.next();
                    assertThat(r.getBytes(1)).isEqualTo(envelope);
                }
            }
        }
    }

    /**
     * Host A: one run suspended, one inside its mutating tool call, one completed. A dies. Host B,
     * with only the store: resumes the suspended run exactly once (its earlier events served from
     * the store), reports the cut-off call, and leaves the completed run alone.
     */
    @Test
    void restart_resumes_suspended_reports_cut_off(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image;
            Thread inFlight;
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db"));
                 Engine engine = f.engine(a, "run-t1-hang", ScriptedAgent.IDENTITY)) {
                Run s = engine.start("run-s", ScriptedAgent.DEFINITION, "hello");
                s.runTurn();
                s.suspend();
                Run done = engine.start("run-d", ScriptedAgent.DEFINITION, "hello");
                done.runTurn();
                done.complete();
                Run cut = engine.start("run-t1-hang", ScriptedAgent.DEFINITION, "hello");
                inFlight = Thread.ofPlatform().start(() -> {
                    try {
                        cut.runTurn();
                    } catch (Exception expected) {
                        // interrupted at the end of the test
                    }
                });
                // Wait until its mutating call started (its ToolCallStarted is durable before it runs).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (f.ledgerLines().stream().noneMatch(l -> l.equals("run-t1-hang t1-write"))) {
                    assertThat(System.nanoTime()).as("the hanging call started").isLessThan(deadline);
                    Thread.onSpinWait();
                }
                image = f.crashImage(a, "b");
                f.state.endAllSessions(); // host A is dead
                inFlight.interrupt();
                inFlight.join();
            }
            int writesBefore = (int) f.ledgerLines().stream().filter(l -> l.contains("write")).count();
            try (HostStore b = HostStore.open(image); Engine engine = f.engine(b)) {
                assertThat(b.crashes()).hasSize(1);
                List<RecoveryDecision> ds = b.recover(engine);
                assertThat(ds).extracting(RecoveryDecision::runId).containsExactly("run-s", "run-t1-hang");
                RecoveryDecision resumed = ds.get(0);
                assertThat(resumed.outcome()).isEqualTo(Outcome.RESUMED);
                assertThat(resumed.reason()).isEqualTo(Reason.SUSPENDED_CHECKPOINT);
                RecoveryDecision cut = ds.get(1);
                assertThat(cut.outcome()).isEqualTo(Outcome.REPORTED);
                assertThat(cut.reason()).isEqualTo(Reason.CUT_OFF_TOOL_CALL);
                assertThat(cut.cutOff().callId()).isEqualTo("t1-write");
                assertThat(cut.cutOff().mutating()).isTrue();
                assertThat(cut.operatorCommand()).isEqualTo("spice-authority runs abandon run-t1-hang");

                Run run = resumed.run();
                long snapshotAt = resumed.lastCheckpoint();
                assertThat(run.events().head()).isEqualTo(snapshotAt + 1);
                // Same-store recovery keeps the events from before the snapshot.
                assertThat(run.events().readAfter(0)).extracting(Event::sequence).startsWith(1L, 2L);
                while (run.completedTurns() < run.definition().maxTurns()) {
                    run.runTurn();
                }
                run.complete();
                // Recovering again resumes nothing twice.
                assertThat(b.recover(engine)).extracting(RecoveryDecision::runId).containsExactly("run-t1-hang");
            }
            List<String> writes = f.ledgerLines().stream().filter(l -> l.contains("write")).toList();
            assertThat(writes).doesNotHaveDuplicates();
            assertThat(writes).hasSize(writesBefore + 3); // run-s turns 2 to 4; the cut-off call never again
        }
    }

    @Test
    void a_cursor_older_than_the_store_gets_the_recovery_cursor(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            byte[] envelope;
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db")); Engine engine = f.engine(a)) {
                Run s = engine.start("run-x", ScriptedAgent.DEFINITION, "hello");
                s.runTurn();
                envelope = s.suspend();
            }
            f.state.endAllSessions();
            // Imported into another store (another host): no events from before the snapshot there.
            try (HostStore b = HostStore.open(f.storeDir("b").resolve("host.db")); Engine engine = f.engine(b)) {
                Run run = engine.importRun(envelope);
                long at = run.events().head() - 1;
                assertThatThrownBy(() -> run.events().readAfter(0)).isInstanceOfSatisfying(CursorOutOfRangeException.class,
                        e -> assertThat(e.recoveryCursor()).isEqualTo(at));
                assertThat(Inspection.of(b.file()).runs()).singleElement()
                        .satisfies(r -> assertThat(r.checkpoints()).singleElement()
                                .satisfies(c -> assertThat(c.sequence()).isEqualTo(at)));
            }
        }
    }

    @Test
    void a_pending_checkpoint_is_reissued_by_the_helper(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path file = f.storeDir("a").resolve("host.db");
            Path image;
            // The envelope's commit fails (the crash between steps 2 and 3): the payload stays pending.
            FaultyDoor door = FaultyDoor.failingCommit(c -> c.contains("signed"));
            try (HostStore a = HostStore.open(file, door); Engine engine = f.engine(a)) {
                Run s = engine.start("run-p", ScriptedAgent.DEFINITION, "hello");
                s.runTurn();
                door.arm();
                assertThatThrownBy(s::suspend).isInstanceOf(spice.authority.host.engine.RecordFailedException.class)
                        .hasMessageContaining("recovery asks the helper for the envelope again");
                image = f.crashImage(a, "b");
            }
            f.state.endAllSessions();
            assertThat(Inspection.of(image).runs()).singleElement()
                    .satisfies(r -> assertThat(r.checkpoints()).singleElement()
                            .satisfies(c -> assertThat(c.state()).isEqualTo("pending")));
            try (HostStore b = HostStore.open(image); Engine engine = f.engine(b)) {
                List<RecoveryDecision> ds = b.recover(engine);
                assertThat(ds).singleElement().satisfies(d -> {
                    assertThat(d.outcome()).isEqualTo(Outcome.RESUMED);
                    assertThat(d.reason()).isEqualTo(Reason.REISSUED_CHECKPOINT);
                });
                Run run = ds.get(0).run();
                run.runTurn();
                run.complete();
            }
        }
    }

    @Test
    void a_pending_checkpoint_whose_sign_never_arrived_is_reported(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image;
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db")); Engine engine = f.engine(a)) {
                Run s = engine.start("run-q", ScriptedAgent.DEFINITION, "hello");
                s.runTurn();
                // The payload is committed pending; the host dies before the sign leaves it.
                byte[] payload = s.history().isEmpty() ? null : pendingPayloadOf(s, a);
                image = f.crashImage(a, "b");
                assertThat(payload).isNotNull();
            }
            f.state.endAllSessions();
            try (HostStore b = HostStore.open(image); Engine engine = f.engine(b)) {
                assertThat(b.recover(engine)).singleElement().satisfies(d -> {
                    assertThat(d.outcome()).isEqualTo(Outcome.REPORTED);
                    assertThat(d.reason()).isEqualTo(Reason.SIGN_NEVER_TOOK_EFFECT);
                    assertThat(d.operatorCommand()).isEqualTo("spice-authority runs abandon run-q");
                });
            }
        }
    }

    /** Records a suspended payload of {@code run} as pending, as the engine does before it signs. */
    private static byte[] pendingPayloadOf(Run run, HostStore store) throws Exception {
        var b = spice.authority.snapshot.payload.Snapshot.builder().runId(run.runId())
                .definition(run.definition()).completedTurns(run.completedTurns()).planIdentity(run.planIdentity())
                .seenInteractionIds(List.of()).lastSequence(run.events().head() + 1)
                .status(spice.authority.snapshot.payload.LifecycleStatus.SUSPENDED);
        for (var m : run.history()) {
            b.addMessage(m);
        }
        byte[] payload = b.build().canonicalBytes();
        store.pending(run.runId(), run.events().head() + 1, spice.authority.snapshot.payload.LifecycleStatus.SUSPENDED, payload);
        return payload;
    }

    @Test
    void the_first_failed_commit_poisons_the_store_and_stops_the_run_before_its_tool(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            FaultyDoor door = FaultyDoor.failingCommit(c -> true);
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db"), door); Engine engine = f.engine(a)) {
                Run run = engine.start("run-f", ScriptedAgent.DEFINITION, "hello");
                door.arm(); // the next commit fails: TurnStarted's
                assertThatThrownBy(run::runTurn).isInstanceOf(spice.authority.host.engine.RecordFailedException.class)
                        .hasMessageContaining("could not be recorded").hasMessageContaining("re-read")
                        .hasMessageContaining("runs abandon run-f");
                assertThat(run.phase()).isEqualTo(Run.Phase.STOPPED);
                assertThat(f.ledgerLines()).as("no tool ran").isEmpty();
                // Poisoned: every later record is refused, so no other run starts either.
                assertThatThrownBy(() -> engine.start("run-g", ScriptedAgent.DEFINITION, "hello"))
                        .isInstanceOf(spice.authority.host.engine.RecordFailedException.class)
                        .hasMessageContaining("failed earlier");
                assertThat(f.state.run("run-g")).as("the helper never heard of it").isNull();
                assertThat(f.state.run("run-f").owner).as("its lease was handed back").isNull();
            }
        }
    }

    @Test
    void a_commit_that_fails_after_it_took_effect_is_proven_by_a_re_read(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            FaultyDoor door = FaultyDoor.failingAfterCommit();
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db"), door); Engine engine = f.engine(a)) {
                Run run = engine.start("run-r", ScriptedAgent.DEFINITION, "hello");
                door.arm();
                assertThatThrownBy(run::runTurn).hasMessageContaining("a re-read proves it durable");
                assertThat(f.ledgerLines()).isEmpty();
            }
        }
    }

    // ---- restore hazards ------------------------------------------------------------------------

    /** A store with run-h suspended after one turn (and host A dead), corrupted by {@code sql}. */
    private static List<RecoveryDecision> recoverCorrupted(Path tmp, EngineIdentity identity, String... sql)
            throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image;
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db")); Engine engine = f.engine(a)) {
                Run s = engine.start("run-h", ScriptedAgent.DEFINITION, "hello");
                s.runTurn();
                s.suspend();
                image = f.crashImage(a, "b");
            }
            f.state.endAllSessions();
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + image); Statement st = c.createStatement()) {
                for (String q : sql) {
                    apply(c, st, q);
                }
            }
            try (HostStore b = HostStore.open(image); Engine engine = f.engine(b, null, identity)) {
                List<RecoveryDecision> ds = b.recover(engine);
                assertThat(f.state.run("run-h").phase).as("nothing was imported").isEqualTo("SUSPENDED");
                return ds;
            }
        }
    }

    private static void refusedWith(List<RecoveryDecision> ds, Reason reason) {
        assertThat(ds).singleElement().satisfies(d -> {
            assertThat(d.outcome()).isEqualTo(Outcome.REFUSED);
            assertThat(d.reason()).isEqualTo(reason);
            assertThat(d.run()).isNull();
        });
    }

    @Test
    void hazard_checkpoint_digest(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY,
                "UPDATE checkpoints SET payload_sha256 = zeroblob(32)"), Reason.CHECKPOINT_DIGEST);
    }

    @Test
    void hazard_checkpoint_sequence(@TempDir Path tmp) throws Exception {
        refusedWith(recoverEdited(tmp, b -> b.lastSequence(99)), Reason.CHECKPOINT_MISMATCH);
    }

    @Test
    void hazard_checkpoint_run_id(@TempDir Path tmp) throws Exception {
        refusedWith(recoverEdited(tmp, b -> b.runId("run-other")), Reason.CHECKPOINT_MISMATCH);
    }

    @Test
    void hazard_checkpoint_envelope(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY,
                "UPDATE checkpoints SET envelope = substr(envelope, 1, length(envelope) - 1)"), Reason.CHECKPOINT_MISMATCH);
    }

    /** As {@link #recoverCorrupted}, the checkpoint's payload rebuilt with {@code edit} (digest kept right). */
    private static List<RecoveryDecision> recoverEdited(Path tmp,
            java.util.function.UnaryOperator<spice.authority.snapshot.payload.Snapshot.Builder> edit) throws Exception {
        return recoverCorrupted(tmp, ScriptedAgent.IDENTITY, EDIT_MARK + "|" + registerEdit(edit));
    }

    static final String EDIT_MARK = "-- edit payload";
    private static final java.util.Map<Integer, java.util.function.UnaryOperator<spice.authority.snapshot.payload.Snapshot.Builder>>
            EDITS = new java.util.concurrent.ConcurrentHashMap<>();

    private static int registerEdit(java.util.function.UnaryOperator<spice.authority.snapshot.payload.Snapshot.Builder> e) {
        int k = EDITS.size() + 1;
        EDITS.put(k, e);
        return k;
    }

    /** Runs {@code q}: SQL, or a registered payload edit. */
    private static void apply(Connection c, Statement st, String q) throws Exception {
        if (!q.startsWith(EDIT_MARK)) {
            st.execute(q);
            return;
        }
        var edit = EDITS.get(Integer.parseInt(q.substring(q.indexOf('|') + 1)));
        byte[] payload;
        try (ResultSet r = st.executeQuery("SELECT payload FROM checkpoints")) {
            r.next();
            payload = r.getBytes(1);
        }
        var s = spice.authority.snapshot.payload.Snapshot.decode(payload);
        var b = spice.authority.snapshot.payload.Snapshot.builder().runId(s.runId()).definition(s.definition())
                .completedTurns(s.completedTurns()).planIdentity(s.planIdentity()).seenInteractionIds(s.seenInteractionIds())
                .lastSequence(s.lastSequence()).status(s.status());
        for (var m : s.history()) {
            b.addMessage(m);
        }
        byte[] edited = edit.apply(b).build().canonicalBytes();
        try (PreparedStatement ps = c.prepareStatement("UPDATE checkpoints SET payload = ?, payload_sha256 = ?")) {
            ps.setBytes(1, edited);
            ps.setBytes(2, HostStore.sha256(edited));
            ps.executeUpdate();
        }
    }

    @Test
    void hazard_payload_invalid(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY,
                "UPDATE checkpoints SET payload = CAST('{\"version\":\"x\"}' AS BLOB), "
                        + "payload_sha256 = unhex('" + hex(HostStore.sha256("{\"version\":\"x\"}".getBytes())) + "')"),
                Reason.PAYLOAD_INVALID);
    }

    @Test
    void hazard_plan_of_another_engine(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, EngineIdentity.generated("another-agent/v9", List.of("stage:kernel"))),
                Reason.PLAN_MISMATCH);
    }

    @Test
    void hazard_plan_of_another_run(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY, "UPDATE runs SET plan_fingerprint = 'sha256:00'"),
                Reason.PLAN_MISMATCH);
    }

    @Test
    void hazard_event_gap(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY, "PRAGMA foreign_keys = OFF",
                "DELETE FROM events WHERE sequence = 3"), Reason.EVENT_CHAIN);
    }

    @Test
    void hazard_event_bad_digest(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY, "UPDATE events SET turn = 7 WHERE sequence = 3"),
                Reason.EVENT_CHAIN);
    }

    @Test
    void hazard_operation_disagrees(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY,
                "UPDATE tool_operations SET tool = 'read_notes' WHERE call_id = 't1-write'"), Reason.OPERATION_MISMATCH);
    }

    @Test
    void hazard_too_many_events(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY, "PRAGMA foreign_keys = OFF",
                "WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < "
                        + (1000 + HostStore.MAX_EVENTS_PER_RUN) + ") INSERT INTO events SELECT 'run-h', i, 'TurnStarted', "
                        + "0, NULL, NULL, NULL, zeroblob(32) FROM n"), Reason.TOO_MANY_EVENTS);
    }

    @Test
    void hazard_missing_checkpoint(@TempDir Path tmp) throws Exception {
        refusedWith(recoverCorrupted(tmp, ScriptedAgent.IDENTITY, "DELETE FROM checkpoints"), Reason.MISSING_CHECKPOINT);
    }

    @Test
    void decisions_are_kept_in_the_store(@TempDir Path tmp) throws Exception {
        List<RecoveryDecision> ds = recoverCorrupted(tmp, ScriptedAgent.IDENTITY, "DELETE FROM checkpoints");
        assertThat(ds).hasSize(1);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("b/host.db"));
             PreparedStatement ps = c.prepareStatement("SELECT run_id, decision, reason FROM recovery_decisions");
             ResultSet r = ps.executeQuery()) {
            assertThat(r.next()).isTrue();
            assertThat(r.getString(1)).isEqualTo("run-h");
            assertThat(r.getString(2)).isEqualTo("refused");
            assertThat(r.getString(3)).isEqualTo("missing_checkpoint");
        }
    }

    static String hex(byte[] b) {
        return java.util.HexFormat.of().formatHex(b);
    }
}
