package spice.authority.host.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineIdentity;
import spice.authority.host.engine.Run;
import spice.authority.host.store.RecoveryDecision.Outcome;
import spice.authority.host.store.RecoveryDecision.Reason;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * One store holds runs of either snapshot format: each checkpoint's payload names its own. A
 * v1alpha3 run is recovered (signed or re-issued) by a v1alpha3 engine, and refused with its
 * reason, before the helper is asked anything, by an engine of another format.
 */
class HostStoreFormatTest {
    private static final String WS = "sha256:" + "5e".repeat(32);
    private static final EngineIdentity V3_IDENTITY = ScriptedAgent.IDENTITY.withWorkspace(WS);

    private static Engine v3(Fixture f, HostStore store) throws Exception {
        return f.engine(store, null, V3_IDENTITY, SnapshotFormat.V1ALPHA3);
    }

    /** A store image with run-3 (v1alpha3) suspended after one turn by host A, now dead. */
    private static Path suspendedV3(Fixture f) throws Exception {
        Path image;
        try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db")); Engine engine = v3(f, a)) {
            Run s = engine.start("run-3", ScriptedAgent.DEFINITION, "hello");
            s.runTurn();
            assertThat(Envelope.parse(s.suspend()).format()).isEqualTo(SnapshotFormat.V1ALPHA3.wire());
            image = f.crashImage(a, "b");
        }
        f.state.endAllSessions();
        return image;
    }

    @Test
    void recover_resumesAV1alpha3RunKilledAfterSuspend_alsoInAStoreThatPinnedV1alpha2(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image = suspendedV3(f);
            // A store created before stores held either format kept this row; it is not read.
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + image); Statement st = c.createStatement()) {
                st.execute("INSERT INTO store_meta (key, value) VALUES ('snapshot_format', 'spice.agent.snapshot/v1alpha2')");
            }
            int writesBefore = (int) f.ledgerLines().stream().filter(l -> l.contains("write")).count();
            try (HostStore b = HostStore.open(image); Engine engine = v3(f, b)) {
                List<RecoveryDecision> ds = b.recover(engine);
                assertThat(ds).singleElement().satisfies(d -> {
                    assertThat(d.outcome()).isEqualTo(Outcome.RESUMED);
                    assertThat(d.reason()).isEqualTo(Reason.SUSPENDED_CHECKPOINT);
                });
                Run run = ds.get(0).run();
                assertThat(run.planIdentity().workspaceFingerprint()).isEqualTo(WS);
                while (run.completedTurns() < run.definition().maxTurns()) {
                    run.runTurn();
                }
                Snapshot done = Snapshot.decode(Envelope.parse(run.complete()).payload());
                assertThat(done.format()).isEqualTo(SnapshotFormat.V1ALPHA3);
                assertThat(b.recover(engine)).isEmpty();
            }
            List<String> writes = f.ledgerLines().stream().filter(l -> l.contains("write")).toList();
            assertThat(writes).doesNotHaveDuplicates().hasSize(writesBefore + 3);
        }
    }

    @Test
    void recover_reissuesAPendingV1alpha3Checkpoint(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image;
            FaultyDoor door = FaultyDoor.failingCommit(c -> c.contains("signed"));
            try (HostStore a = HostStore.open(f.storeDir("a").resolve("host.db"), door); Engine engine = v3(f, a)) {
                Run s = engine.start("run-p", ScriptedAgent.DEFINITION, "hello");
                s.runTurn();
                door.arm();
                assertThatThrownBy(s::suspend).isInstanceOf(spice.authority.host.engine.RecordFailedException.class);
                image = f.crashImage(a, "b");
            }
            f.state.endAllSessions();
            try (HostStore b = HostStore.open(image); Engine engine = v3(f, b)) {
                List<RecoveryDecision> ds = b.recover(engine);
                assertThat(ds).singleElement().satisfies(d -> {
                    assertThat(d.outcome()).isEqualTo(Outcome.RESUMED);
                    assertThat(d.reason()).isEqualTo(Reason.REISSUED_CHECKPOINT);
                });
                Run run = ds.get(0).run();
                run.runTurn();
                assertThat(Envelope.parse(run.complete()).format()).isEqualTo(SnapshotFormat.V1ALPHA3.wire());
            }
        }
    }

    @Test
    void recover_v1alpha3RunWithAV1alpha2Engine_refusedFormatMismatch_helperNotAsked(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image = suspendedV3(f);
            int requestsBefore = f.helper.requests().size();
            try (HostStore b = HostStore.open(image); Engine engine = f.engine(b)) {
                List<RecoveryDecision> ds = b.recover(engine);
                assertThat(ds).singleElement().satisfies(d -> {
                    assertThat(d.outcome()).isEqualTo(Outcome.REFUSED);
                    assertThat(d.reason()).isEqualTo(Reason.FORMAT_MISMATCH);
                    assertThat(d.detail()).contains("spice.agent.snapshot/v1alpha3");
                });
            }
            assertThat(f.helper.requests().subList(requestsBefore, f.helper.requests().size()))
                    .extracting(r -> r.line()).noneMatch(l -> l.startsWith("POST /v1/imports") || l.contains("/snapshots"));
            assertThat(f.state.run("run-3").phase).isEqualTo("SUSPENDED");
            // The right engine still resumes it.
            try (HostStore b = HostStore.open(image); Engine engine = v3(f, b)) {
                assertThat(b.recover(engine)).singleElement().extracting(RecoveryDecision::outcome).isEqualTo(Outcome.RESUMED);
            }
        }
    }

    @Test
    void recover_v1alpha3RunWithAnotherWorkspace_refusedPlanMismatch(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path image = suspendedV3(f);
            try (HostStore b = HostStore.open(image);
                 Engine engine = f.engine(b, null, ScriptedAgent.IDENTITY.withWorkspace("sha256:" + "77".repeat(32)),
                         SnapshotFormat.V1ALPHA3)) {
                assertThat(b.recover(engine)).singleElement().satisfies(d -> {
                    assertThat(d.outcome()).isEqualTo(Outcome.REFUSED);
                    assertThat(d.reason()).isEqualTo(Reason.PLAN_MISMATCH);
                });
            }
            assertThat(f.state.run("run-3").phase).isEqualTo("SUSPENDED");
        }
    }

    @Test
    void newStore_pinsNoSnapshotFormat(@TempDir Path tmp) throws Exception {
        try (Fixture f = new Fixture(tmp)) {
            Path file = f.storeDir("a").resolve("host.db");
            try (HostStore a = HostStore.open(file)) {
                assertThat(a.file()).isEqualTo(file);
            }
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement();
                 var r = st.executeQuery("SELECT count(*) FROM store_meta WHERE key = 'snapshot_format'")) {
                assertThat(r.next()).isTrue();
                assertThat(r.getInt(1)).isZero();
            }
        }
    }
}
