package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.ImportView;
import spice.authority.host.RetryPolicy;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.snapshot.contract.RunPhase;

/**
 * {@link Engine#close()} against a concurrent {@link Engine#start}: once close has begun, a start
 * either refuses before it takes the helper's lease, or releases what it took and leaves the run
 * stopped. A run that close stopped is never RUNNING afterwards.
 */
class EngineCloseStartRaceTest {

    private static StaticToolPlan plan(Path ledger) {
        return StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(ledger, null)));
    }

    @Test
    void close_whileTheHelperStartsTheRun_startReleasesTheHelperLease_andNothingRuns(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        StaticToolPlan plan = plan(tmp.resolve("ledger"));
        CountDownLatch inStart = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Authority blocking = new ForwardingAuthority(Authorities.of(client, client.openSession())) {
                @Override
                public void start(String runId) throws IOException {
                    super.start(runId); // the helper's lease is taken
                    inStart.countDown();
                    try {
                        closed.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            Engine engine = Engine.builder(blocking, ScriptedAgent.model(), plan).identity(ScriptedAgent.IDENTITY).build();
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread starter = Thread.ofPlatform().start(() -> {
                try {
                    outcome.set(engine.start("run-1", ScriptedAgent.DEFINITION, "hello"));
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            assertThat(inStart.await(10, TimeUnit.SECONDS)).isTrue();
            engine.close();
            closed.countDown();
            starter.join(10_000);

            assertThat(outcome.get()).isInstanceOf(RunStateException.class);
            Run run = engine.run("run-1");
            assertThat(run == null || run.phase() == Run.Phase.STOPPED).as("the run never runs: %s", run).isTrue();
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/runs/run-1/lease");
            assertThat(plan.liveLeases()).isZero();
        }
    }

    /**
     * The helper's run leases, in memory: a fake door fast enough to race close and start many
     * thousand times. Records which runs were started and which released.
     */
    private static final class Leases implements Authority {
        final Set<String> started = ConcurrentHashMap.newKeySet();
        final Set<String> released = ConcurrentHashMap.newKeySet();

        @Override
        public void start(String runId) {
            started.add(runId);
        }

        @Override
        public void release(String runId) {
            released.add(runId);
        }

        @Override
        public spice.authority.host.RunView inspect(String runId) {
            return new spice.authority.host.RunView(runId, RunPhase.ACTIVE, 1, true, false);
        }

        @Override
        public byte[] sign(String runId, byte[] payload) throws IOException {
            throw new IOException("not in this test");
        }

        @Override
        public void resume(String runId) throws IOException {
            throw new IOException("not in this test");
        }

        @Override
        public ImportView prepareImport(byte[] envelope) throws IOException {
            throw new IOException("not in this test");
        }

        @Override
        public void consume(ImportView tx) throws IOException {
            throw new IOException("not in this test");
        }

        @Override
        public void activate(ImportView tx) throws IOException {
            throw new IOException("not in this test");
        }

        @Override
        public void abortImport(ImportView tx) throws IOException {
            throw new IOException("not in this test");
        }
    }

    /**
     * Close lands anywhere in a start, including between the run's registration and its start
     * (which no seam can hold open, so this races many times): afterwards no run is RUNNING, every
     * refused start whose helper lease was taken has released it, and no tool lease is left.
     */
    @Test
    void closeRacingStart_manyTimes_noRunIsRunningAfterClose_andEveryRefusedStartReleasedItsLease(@TempDir Path tmp)
            throws Exception {
        StaticToolPlan plan = plan(tmp.resolve("ledger"));
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < 5_000 && failures.size() < 5; i++) {
            Leases leases = new Leases();
            Engine engine = Engine.builder(leases, ScriptedAgent.model(), plan).identity(ScriptedAgent.IDENTITY).build();
            String runId = "run-" + i;
            AtomicReference<Object> outcome = new AtomicReference<>();
            CountDownLatch go = new CountDownLatch(1);
            Thread starter = Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    outcome.set(engine.start(runId, ScriptedAgent.DEFINITION, "hello"));
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            go.countDown();
            // Close as soon as the run is registered (or, failing that, once the start is over).
            while (engine.run(runId) == null && starter.isAlive()) {
                Thread.onSpinWait();
            }
            engine.close();
            starter.join(10_000);

            Run run = engine.run(runId);
            Object o = outcome.get();
            if (run != null && run.phase() == Run.Phase.RUNNING) {
                failures.add(runId + ": RUNNING after close (start returned " + o + ")");
            }
            if (o instanceof RunStateException && leases.started.contains(runId)) {
                if (!leases.released.contains(runId)) {
                    failures.add(runId + ": refused after the helper started it, lease not released");
                }
            } else if (!(o instanceof Run)) {
                failures.add(runId + ": unexpected " + o);
            }
        }
        assertThat(failures).isEmpty();
        assertThat(plan.liveLeases()).isZero();
    }

    @Test
    void start_afterClose_isRefusedBeforeAnyLease(@TempDir Path tmp) throws Exception {
        StaticToolPlan plan = plan(tmp.resolve("ledger"));
        Leases leases = new Leases();
        Engine engine = Engine.builder(leases, ScriptedAgent.model(), plan).identity(ScriptedAgent.IDENTITY).build();
        engine.close();
        assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello")).isInstanceOf(RunStateException.class);
        assertThat(leases.started).isEmpty();
        assertThat(plan.liveLeases()).isZero();
        assertThat(engine.run("run-1")).isNull();
    }
}
