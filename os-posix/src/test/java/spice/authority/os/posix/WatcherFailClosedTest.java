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
 * The pidfd watcher fails closed without taking a failure for a death: when its poll thread dies
 * on an {@link Error}, no watch of a live host fires (that would release a live host's lease), the
 * watches keep their pidfds so {@link ProcessWatcher.Watch#liveness()} still answers from the
 * kernel and fires on a proven exit, and later {@code watch()} calls are refused.
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

    private static long startTimeOf(PidfdProcessWatcher w, Process p) throws ProcessWatchException {
        return w.startTime(p.pid()).orElseThrow();
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void pollThreadDies_noLiveHostsWatchFires_livenessStillAnswers_andNewWatchesAreRefused() throws Exception {
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
        CountDownLatch firedB = new CountDownLatch(1);
        ProcessWatcher.Watch wa = watcher.watch(a.pid(), startTimeOf(watcher, a), callsA::incrementAndGet);
        ProcessWatcher.Watch wb = watcher.watch(b.pid(), startTimeOf(watcher, b), () -> {
            callsB.incrementAndGet();
            firedB.countDown();
        });
        ProcessWatcher.Watch wSpare = watcher.watch(spare.pid(), startTimeOf(watcher, spare),
                callsSpare::incrementAndGet);
        assertThat(watcher.registeredCount()).isEqualTo(3);
        assertThat(Poll.until(Duration.ofSeconds(10), Duration.ofMillis(5), pollThread::get, t -> t != null))
                .as("the poll thread ran").isNotNull();
        assertThat(watcher.healthy()).isTrue();

        failNext.set(true);
        wSpare.close(); // wakes the poll thread, whose next iteration throws the Error
        assertThat(pollThread.get().join(Duration.ofSeconds(5))).as("the poll thread is dead").isTrue();

        // SECURITY: a failure of the watcher is not a death: the live hosts keep their watches.
        // A watch fired by the dying thread reads DEAD at once, before its callback has run.
        assertThat(watcher.healthy()).isFalse();
        assertThat(wa.liveness()).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(wb.liveness()).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(callsA).as("a live host's watch never fires on a watcher failure").hasValue(0);
        assertThat(callsB).hasValue(0);
        assertThat(watcher.registeredCount()).as("the pidfds stay, so liveness is still known").isEqualTo(2);

        // A proven exit is still found (from the kept pidfd) and fires exactly then.
        b.destroyForcibly();
        assertThat(b.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(wb.liveness()).isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(firedB.await(1, TimeUnit.SECONDS)).as("the proven exit fires").isTrue();
        assertThat(wb.liveness()).isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(watcher.registeredCount()).as("its pidfd released").isEqualTo(1);

        Process c = sleeper();
        long stC = startTimeOf(watcher, c);
        long fdsBefore = openFds();
        AtomicInteger callsC = new AtomicInteger();
        assertThatThrownBy(() -> watcher.watch(c.pid(), stC, callsC::incrementAndGet))
                .isInstanceOf(ProcessWatchException.class)
                .hasMessageContaining("process watcher stopped");
        assertThat(openFds()).as("a refused watch leaves no pidfd open").isEqualTo(fdsBefore);

        wa.close();
        wb.close(); // no callback runs after close() returned
        assertThat(watcher.registeredCount()).isZero();
        assertThat(callsA).as("closed while alive: never fires").hasValue(0);
        assertThat(callsB).as("exactly once").hasValue(1);
        assertThat(callsSpare).as("a watch closed before the failure never fires").hasValue(0);
        assertThat(callsC).hasValue(0);
    }

    @Test
    void pollThreadDiesAtOnce_theWatchThatStartedItStaysUnfired_andTheNextIsRefused() throws Exception {
        // The thread dies on its first iteration, racing the watch() that started it: the watch
        // is registered under the lock before the thread can mark the watcher dead; it must not
        // fire while its host lives.
        AtomicReference<Thread> pollThread = new AtomicReference<>();
        PidfdProcessWatcher watcher = new PidfdProcessWatcher(() -> {
            pollThread.set(Thread.currentThread());
            throw new InjectedPollFailure();
        });
        Process a = sleeper();
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(a.pid(), startTimeOf(watcher, a), fired::countDown)) {
            Thread dying = Poll.until(Duration.ofSeconds(10), Duration.ofMillis(5), pollThread::get, t -> t != null);
            assertThat(dying.join(Duration.ofSeconds(5))).as("the poll thread is dead").isTrue();
            // A watch fired by the dying thread reads DEAD at once, before its callback has run.
            assertThat(w.liveness()).isEqualTo(ProcessWatcher.Liveness.ALIVE);
            assertThat(fired.getCount()).as("never fires for a live host").isOne();
            assertThat(a.isAlive()).isTrue();
        }
        Process b = sleeper();
        assertThatThrownBy(() -> watcher.watch(b.pid(), startTimeOf(watcher, b), () -> {}))
                .isInstanceOf(ProcessWatchException.class)
                .hasMessageContaining("process watcher stopped");
        assertThat(watcher.registeredCount()).isZero();
    }
}
