package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.envelope.Envelope;

/** 16 threads on distinct runs and 16 on the same run: no lost update, no deadlock. */
class ConcurrencyTest {
    private static final Cancellation NONE = Cancellation.none();

    @Test
    void sixteenThreadsOnDistinctRuns_fullCycleEach_noLostUpdate() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            String run = "run-" + t;
            futures.add(pool.submit(() -> {
                for (int i = 0; i < 20; i++) {
                    String id = run + "-" + i;
                    ActiveRun r = a.start(new RunId(id), NONE);
                    r.seal(Fixtures.suspended(id, 7), NONE);
                    r.resume(NONE);
                    r.seal(Fixtures.snapshot(id, "completed", 9), NONE);
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        for (int t = 0; t < 16; t++) {
            for (int i = 0; i < 20; i++) {
                RunRecord rec = a.inspect(new RunId("run-" + t + "-" + i)).orElseThrow();
                assertThat(rec.phase()).isEqualTo(RunPhase.COMPLETED);
                assertThat(rec.runGeneration()).isEqualTo(2);
            }
        }
        assertThat(a.outstandingLeases()).isZero();
        a.close(java.time.Duration.ofSeconds(1));
    }

    @Test
    void sixteenThreadsOnTheSameRun_exactlyOneStartsAndExactlyOneImportConsumes() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        String run = "same-run";
        ConcurrentLinkedQueue<ActiveRun> winners = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> losers = new ConcurrentLinkedQueue<>();
        race(16, () -> {
            try {
                winners.add(a.start(new RunId(run), NONE));
            } catch (AuthorityException e) {
                losers.add(e.code());
            }
        });
        assertThat(winners).hasSize(1);
        assertThat(losers).hasSize(15).allMatch(c -> c.equals("busy") || c.equals("state_conflict"));
        ActiveRun owner = winners.poll();
        Envelope env = owner.seal(Fixtures.suspended(run, 7), NONE).envelope();
        owner.close();

        for (int round = 0; round < 20; round++) {
            MemoryDirectory d = new MemoryDirectory();
            RunAuthority b = Fixtures.open(d);
            ActiveRun o = b.start(new RunId(run), NONE);
            Envelope e = o.seal(Fixtures.suspended(run, 7), NONE).envelope();
            o.close();
            AtomicInteger activated = new AtomicInteger();
            ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
            race(16, () -> {
                try {
                    RunImport imp = b.prepareImport(e, NONE);
                    imp.consume(NONE);
                    ActiveRun act = imp.activate(NONE);
                    activated.incrementAndGet();
                    act.close();
                } catch (AuthorityException ex) {
                    outcomes.add(ex.code());
                }
            });
            assertThat(activated.get()).as("round " + round).isEqualTo(1);
            assertThat(outcomes).allMatch(c -> c.equals("busy") || c.equals("verification_failed"));
            assertThat(b.inspect(new RunId(run)).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
            assertThat(b.outstandingLeases()).isZero();
        }
        assertThat(env).isNotNull();
    }

    private static void race(int threads, Runnable body) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    body.run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
        }
        go.countDown();
        assertThat(done.await(60, TimeUnit.SECONDS)).as("no deadlock").isTrue();
    }
}
