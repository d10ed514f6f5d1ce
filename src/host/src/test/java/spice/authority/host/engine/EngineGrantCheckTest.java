package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.host.engine.EngineAuthorityFailureTest.engine;
import static spice.authority.host.engine.EngineAuthorityFailureTest.except;
import static spice.authority.host.engine.EngineAuthorityFailureTest.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.FakeHelper;
import spice.authority.host.demo.ScriptedAgent;

/**
 * A 200 is not a lease: against a lying or confused helper (a fake one on a real socket, with the
 * real client underneath), a start, resume or activate answer that does not name the run, ACTIVE
 * and owned grants nothing, and a lease check before a tool round whose answer cannot be used
 * stops the run. In every case no tool runs.
 */
class EngineGrantCheckTest {
    private static List<String> lines(Path ledger) throws IOException {
        return Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
    }

    @Test
    void start_forgedGrant_isNoLease_noToolRuns(@TempDir Path tmp) throws Exception {
        Map<String, byte[]> forged = Map.of(
                "another run, FAILED, not owned", run("run-2", "FAILED", 1, false),
                "another run, ACTIVE, owned", run("run-2", "ACTIVE", 1, true),
                "this run, FAILED", run("run-1", "FAILED", 1, true),
                "this run, not owned", run("run-1", "ACTIVE", 1, false),
                "this run, fenced", FakeHelper.json(200,
                        "{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":true,\"fenced\":true}"));
        int i = 0;
        for (Map.Entry<String, byte[]> f : forged.entrySet()) {
            Path sock = tmp.resolve("h" + i + ".sock");
            Path ledger = tmp.resolve("ledger-" + i++);
            try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/runs", f.getValue()))) {
                Engine engine = engine(sock, ledger);
                assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello")).as(f.getKey())
                        .isInstanceOfSatisfying(AuthorityFailedException.class, e -> {
                            assertThat(e.uncertain()).isTrue();
                            assertThat(e.getMessage()).contains("grant");
                            // Typed: the fake helper released the lease it was asked to hand back.
                            assertThat(e.leaseHandBack()).isEqualTo(LeaseHandBack.HANDED_BACK);
                        });
                assertThat(engine.run("run-1")).as(f.getKey()).isNull();
                assertThat(lines(ledger)).as(f.getKey()).isEmpty();
                // Whatever lease the session may hold is handed back.
                assertThat(h.requests()).extracting(FakeHelper.Request::line).as(f.getKey())
                        .contains("DELETE /v1/runs/run-1/lease")
                        .noneMatch(l -> l.startsWith("GET /v1/runs/"));
            }
        }
    }

    @Test
    void resume_forgedGrant_isNoLease_noToolRuns(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest.suspendedOnceSigned(
                except("POST /v1/runs/run-1/resume", run("run-2", "ACTIVE", 2, true))))) {
            Run run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
            run.runTurn();
            run.suspend();
            int before = lines(ledger).size();
            assertThatThrownBy(run::resumeLocal).isInstanceOf(EngineException.class);
            assertThat(run.phase()).isNotEqualTo(Run.Phase.RUNNING);
            assertThatThrownBy(run::runTurn).isInstanceOf(RunStateException.class);
            assertThat(lines(ledger)).hasSize(before);
        }
    }

    @Test
    void activate_forgedGrant_isNoLease_theImportedRunNeverRuns(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope;
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            Run first = engine(sock, tmp.resolve("ledger-a")).start("run-x", ScriptedAgent.DEFINITION, "hello");
            first.runTurn();
            envelope = first.suspend();
        }
        Path ledger = tmp.resolve("ledger-b");
        try (FakeHelper h = FakeHelper.unix(sock, except("POST /v1/imports/imp-1/activate",
                run("run-y", "ACTIVE", 2, true)))) {
            Engine engine = engine(sock, ledger);
            assertThatThrownBy(() -> engine.importRun(envelope)).isInstanceOf(ImportUncertainException.class)
                    .hasMessageContaining("grant");
            Run imported = engine.run("run-x");
            if (imported != null) {
                assertThatThrownBy(imported::runTurn).isInstanceOf(RunStateException.class);
            }
            assertThat(lines(ledger)).isEmpty();
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/runs/run-x/lease");
        }
    }

    @Test
    void roundCheck_unusableAnswer_stopsTheRun_noToolRuns(@TempDir Path tmp) throws Exception {
        Map<String, byte[]> unusable = Map.of(
                "another run's view", run("run-2", "ACTIVE", 1, true),
                "not a run", FakeHelper.json(200, "{\"hello\":1}"),
                "a code this client does not know", FakeHelper.problem(409, "newer_code", "?"),
                "a busy answer", FakeHelper.problem(409, "busy", "run run-1 is owned by a live process"));
        int i = 0;
        for (Map.Entry<String, byte[]> u : unusable.entrySet()) {
            Path sock = tmp.resolve("h" + i + ".sock");
            Path ledger = tmp.resolve("ledger-" + i++);
            try (FakeHelper h = FakeHelper.unix(sock, except("GET /v1/runs/run-1", u.getValue()))) {
                Run run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
                assertThatThrownBy(run::runTurn).as(u.getKey()).isInstanceOf(RunStateException.class)
                        .hasMessageContaining("before its tool calls");
                assertThat(run.phase()).as(u.getKey()).isEqualTo(Run.Phase.STOPPED);
                assertThat(lines(ledger)).as(u.getKey() + ": no tool ran").isEmpty();
            }
        }
    }

    @Test
    void roundCheck_helperUnreachableAfterAProvenGrant_roundGoesOn(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        Path ledger = tmp.resolve("ledger");
        Run run;
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            run = engine(sock, ledger).start("run-1", ScriptedAgent.DEFINITION, "hello");
        }
        // Nothing listens now: the check sends nothing, and the start's checked grant proved the lease.
        run.runTurn();
        assertThat(lines(ledger)).hasSize(1);
    }
}
