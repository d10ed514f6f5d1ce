package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;

/**
 * The pidfd watcher fails closed: when its poll thread dies on an {@link Error}, every
 * registered watch fires (the sessions bound to those hosts end rather than outlive them, since
 * no exit can be noticed any more) and later {@code watch()} calls are refused.
 *
 * <p>Each test uses its own watcher (not the JVM-wide one, which other tests need alive), built
 * with the package-private poll hook that lets the test throw inside the poll loop. The
 * injected {@link Error} escapes the poll thread on purpose, so its stack trace appears on
 * stderr.
 */
class WatcherFailClosedTest {

    private final Sleepers sleepers = new Sleepers();

    /** The failure the hook injects into the poll loop. */
    private static final class InjectedPollFailure extends Error {
        private static final long serialVersionUID = 1L;

        InjectedPollFailure() {
            super("injected by WatcherFailClosedTest (expected)");
        }
    }

    @BeforeAll
    static void linuxOnly() {
        assumeTrue(PosixPlatform.current().map(PosixPlatform::hasPidfd).orElse(false), "pidfd is Linux-only");
    }

    @AfterEach
    void killAndReapChildren() throws InterruptedException {
        sleepers.reap();
    }

    private Process sleeper() throws IOException {
        return sleepers.start();
    }

    private static long startTimeOf(PidfdProcessWatcher w, Process p) {
        return w.startTime(p.pid()).orElseThrow();
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void pollThreadDies_firesEveryWatchPromptly_andRefusesNewWatches() throws Exception {
        AtomicBoolean failNext = new AtomicBoolean();
        AtomicReference<Thread> pollThread = new AtomicReference<>();
        PidfdProcessWatcher watcher = new PidfdProcessWatcher(() -> {
            pollThread.set(Thread.currentThread());
            if (failNext.get()) {
                throw new InjectedPollFailure();
            }
        });
        Process a = sleeper();
        Process b = sleeper();
        Process spare = sleeper();
        AtomicInteger callsA = new AtomicInteger();
        AtomicInteger callsB = new AtomicInteger();
        AtomicInteger callsSpare = new AtomicInteger();
        CountDownLatch fired = new CountDownLatch(2);
        ProcessWatcher.Watch wa = watcher.watch(a.pid(), startTimeOf(watcher, a), () -> {
            callsA.incrementAndGet();
            fired.countDown();
        });
        ProcessWatcher.Watch wb = watcher.watch(b.pid(), startTimeOf(watcher, b), () -> {
            callsB.incrementAndGet();
            fired.countDown();
        });
        ProcessWatcher.Watch wSpare = watcher.watch(spare.pid(), startTimeOf(watcher, spare),
                callsSpare::incrementAndGet);
        Thread.sleep(100);
        assertThat(fired.getCount()).as("nothing fires while the hosts and the poll thread live").isEqualTo(2);
        assertThat(watcher.registeredCount()).isEqualTo(3);
        assertThat(pollThread.get()).as("the poll thread ran").isNotNull();

        failNext.set(true);
        long failedAt = System.nanoTime();
        wSpare.close(); // wakes the poll thread, whose next iteration throws the Error

        assertThat(fired.await(1, TimeUnit.SECONDS)).as("both watches fire within 1 s of the poll thread's death")
                .isTrue();
        System.out.printf("WatcherFailClosedTest: watches fired %.3f ms after the poll thread was made to fail%n",
                (System.nanoTime() - failedAt) / 1e6);
        assertThat(pollThread.get().join(Duration.ofSeconds(5))).as("the poll thread is dead").isTrue();
        assertThat(a.isAlive() && b.isAlive()).as("they fired because the watcher died, not the hosts").isTrue();
        assertThat(watcher.registeredCount()).as("every pidfd released").isZero();

        Process c = sleeper();
        long stC = startTimeOf(watcher, c);
        long fdsBefore = openFds();
        AtomicInteger callsC = new AtomicInteger();
        assertThatThrownBy(() -> watcher.watch(c.pid(), stC, callsC::incrementAndGet))
                .isInstanceOf(ProcessWatchException.class)
                .hasMessageContaining("process watcher stopped");
        assertThat(openFds()).as("a refused watch leaves no pidfd open").isEqualTo(fdsBefore);
        assertThat(watcher.registeredCount()).isZero();

        wa.close();
        wb.close();
        Thread.sleep(100);
        assertThat(callsA).as("exactly once").hasValue(1);
        assertThat(callsB).as("exactly once").hasValue(1);
        assertThat(callsSpare).as("a watch closed before the failure never fires").hasValue(0);
        assertThat(callsC).hasValue(0);
    }

    @Test
    void pollThreadDiesAtOnce_theWatchThatStartedItStillFires_andTheNextIsRefused() throws Exception {
        // The thread dies on its first iteration, racing the watch() that started it: the watch
        // is registered under the lock before the thread can mark the watcher dead, so it fires.
        PidfdProcessWatcher watcher = new PidfdProcessWatcher(() -> {
            throw new InjectedPollFailure();
        });
        Process a = sleeper();
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(a.pid(), startTimeOf(watcher, a), fired::countDown)) {
            assertThat(fired.await(1, TimeUnit.SECONDS)).as("fires within 1 s").isTrue();
            assertThat(a.isAlive()).isTrue();
        }
        Process b = sleeper();
        assertThatThrownBy(() -> watcher.watch(b.pid(), startTimeOf(watcher, b), () -> {}))
                .isInstanceOf(ProcessWatchException.class)
                .hasMessageContaining("process watcher stopped");
        assertThat(watcher.registeredCount()).isZero();
    }
}
