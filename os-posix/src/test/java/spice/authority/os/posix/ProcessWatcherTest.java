package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;

/** The Linux pidfd process watcher against real child processes. */
class ProcessWatcherTest {

    private static ProcessWatcher watcher;
    private final Sleepers sleepers = new Sleepers();

    @BeforeAll
    static void linuxOnly() {
        assumeTrue(PosixPlatform.current().map(PosixPlatform::hasPidfd).orElse(false), "pidfd is Linux-only");
        watcher = SecureDirectories.provider().processWatcher();
    }

    @AfterEach
    void killAndReapChildren() throws InterruptedException {
        sleepers.reap();
    }

    private Process sleeper() throws IOException {
        return sleepers.start();
    }

    private static long startTimeOf(Process p) throws ProcessWatchException {
        return watcher.startTime(p.pid()).orElseThrow();
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    /** Waits until the fd count falls back to {@code baseline} (closing is synchronous; this only absorbs noise). */
    private static long settleFds(long baseline) throws Exception {
        return Poll.until(java.time.Duration.ofSeconds(1), java.time.Duration.ofMillis(20), ProcessWatcherTest::openFds,
                n -> n <= baseline);
    }

    @Test
    void provider_onLinux_returnsOneWatcher() {
        assertThat(new PosixSecureDirectoryProvider().processWatcher()).isSameAs(watcher);
    }

    @Test
    void watch_childKilledWithSigkill_firesWithinOneSecond() throws Exception {
        Process child = sleeper();
        long st = startTimeOf(child);
        AtomicLong firedAt = new AtomicLong();
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(child.pid(), st, () -> {
            firedAt.set(System.nanoTime());
            calls.incrementAndGet();
            fired.countDown();
        })) {
            assertThat(w.pid()).isEqualTo(child.pid());
            sleepers.awaitOneMoreRound(watcher);
            assertThat(calls).as("no call while alive").hasValue(0);
            long killedAt = System.nanoTime();
            child.destroyForcibly();
            assertThat(fired.await(1, TimeUnit.SECONDS)).as("onExit within 1 s").isTrue();
            double ms = (firedAt.get() - killedAt) / 1e6;
            System.out.printf("ProcessWatcherTest: exit notification latency after SIGKILL: %.3f ms%n", ms);
            assertThat(ms).isLessThan(1000);
            sleepers.awaitOneMoreRound(watcher);
            assertThat(calls).as("exactly once").hasValue(1);
        }
        assertThat(calls).as("close after firing does not call again").hasValue(1);
    }

    @Test
    void watch_alreadyDeadPid_firesAtOnce() throws Exception {
        Process child = sleeper();
        long pid = child.pid();
        long st = startTimeOf(child);
        child.destroyForcibly();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(pid, st, fired::countDown)) {
            assertThat(fired.await(1, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void watch_invalidPid_firesAtOnce() throws Exception {
        for (long pid : new long[] {0, -1, 1L << 40}) {
            CountDownLatch fired = new CountDownLatch(1);
            try (ProcessWatcher.Watch w = watcher.watch(pid, 1, fired::countDown)) {
                assertThat(fired.await(1, TimeUnit.SECONDS)).as("pid %d", pid).isTrue();
            }
        }
    }

    @Test
    void watch_wrongStartTime_firesAtOnce() throws Exception {
        Process child = sleeper();
        long st = startTimeOf(child);
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(child.pid(), st + 1, fired::countDown)) {
            assertThat(fired.await(1, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(child.isAlive()).isTrue();
    }

    @Test
    void close_beforeExit_preventsCallback() throws Exception {
        Process child = sleeper();
        AtomicInteger calls = new AtomicInteger();
        ProcessWatcher.Watch w = watcher.watch(child.pid(), startTimeOf(child), calls::incrementAndGet);
        w.close();
        w.close(); // idempotent
        child.destroyForcibly();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        sleepers.awaitOneMoreRound(watcher);
        assertThat(calls).hasValue(0);
    }

    @Test
    void watchAndClose_200Cycles_releasesEveryFd() throws Exception {
        Process child = sleeper();
        long st = startTimeOf(child);
        watcher.watch(child.pid(), st, () -> {}).close(); // starts the poll thread and its eventfd
        long baseline = openFds();
        AtomicInteger calls = new AtomicInteger();
        for (int i = 0; i < 200; i++) {
            watcher.watch(child.pid(), st, calls::incrementAndGet).close();
        }
        assertThat(settleFds(baseline)).isEqualTo(baseline);
        assertThat(((PidfdProcessWatcher) watcher).registeredCount()).isZero();
        assertThat(calls).hasValue(0);
    }

    @Test
    void fired_200Watches_releaseEveryFd() throws Exception {
        Process warm = sleeper();
        watcher.watch(warm.pid(), startTimeOf(warm), () -> {}).close();
        List<Process> batch = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            batch.add(sleeper());
        }
        long baseline = openFds();
        CountDownLatch fired = new CountDownLatch(200);
        List<ProcessWatcher.Watch> watches = new ArrayList<>();
        for (Process p : batch) {
            long st = startTimeOf(p);
            for (int j = 0; j < 10; j++) {
                watches.add(watcher.watch(p.pid(), st, fired::countDown));
            }
        }
        assertThat(openFds()).isEqualTo(baseline + 200);
        for (Process p : batch) {
            p.destroyForcibly();
        }
        assertThat(fired.await(5, TimeUnit.SECONDS)).as("all 200 fired, %d left", fired.getCount()).isTrue();
        assertThat(settleFds(baseline)).isEqualTo(baseline);
        watches.forEach(ProcessWatcher.Watch::close);
        assertThat(openFds()).isEqualTo(baseline);
        assertThat(((PidfdProcessWatcher) watcher).registeredCount()).isZero();
    }

    @Test
    void fiftyConcurrentWatches_onFiftyChildren_allFire() throws Exception {
        List<Process> batch = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            batch.add(sleeper());
        }
        CountDownLatch fired = new CountDownLatch(50);
        AtomicInteger calls = new AtomicInteger();
        List<ProcessWatcher.Watch> watches = new ArrayList<>();
        for (Process p : batch) {
            watches.add(watcher.watch(p.pid(), startTimeOf(p), () -> {
                calls.incrementAndGet();
                fired.countDown();
            }));
        }
        long killedAt = System.nanoTime();
        batch.parallelStream().forEach(Process::destroyForcibly);
        assertThat(fired.await(5, TimeUnit.SECONDS)).as("%d left", fired.getCount()).isTrue();
        System.out.printf("ProcessWatcherTest: 50 children killed, all notified after %.3f ms%n",
                (System.nanoTime() - killedAt) / 1e6);
        sleepers.awaitOneMoreRound(watcher);
        assertThat(calls).hasValue(50);
        watches.forEach(ProcessWatcher.Watch::close);
    }

    @Test
    void liveness_aliveWhileRunning_deadAfterExit() throws Exception {
        Process child = sleeper();
        long st = startTimeOf(child);
        assertThat(watcher.liveness(child.pid(), st)).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(watcher.liveness(child.pid(), st + 1)).as("other start time").isEqualTo(ProcessWatcher.Liveness.DEAD);
        child.destroyForcibly();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(watcher.liveness(child.pid(), st)).isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(watcher.startTime(child.pid())).isEmpty();
    }

    @Test
    void watchLiveness_fromThePidfd_aliveThenDead() throws Exception {
        Process child = sleeper();
        long st = startTimeOf(child);
        CountDownLatch fired = new CountDownLatch(1);
        ProcessWatcher.Watch w = watcher.watch(child.pid(), st, fired::countDown);
        assertThat(w.liveness()).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        child.destroyForcibly();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(fired.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(w.liveness()).isEqualTo(ProcessWatcher.Liveness.DEAD);
        w.close();
        assertThat(w.liveness()).as("a closed watch knows nothing").isEqualTo(ProcessWatcher.Liveness.DEAD);
    }

    @Test
    void startTime_children_increaseAndSelfIsStable() throws Exception {
        long self = ProcessHandle.current().pid();
        long mine = watcher.startTime(self).orElseThrow();
        assertThat(watcher.startTime(self)).hasValue(mine);
        Process child = sleeper();
        assertThat(startTimeOf(child)).isGreaterThanOrEqualTo(mine);
    }

    @Test
    void realUid_ofOwnPid_isTheEffectiveUid() throws Exception {
        assertThat(watcher.realUid(ProcessHandle.current().pid())).hasValue(Libc.geteuid());
        Process child = sleeper();
        assertThat(watcher.realUid(child.pid())).hasValue(Libc.geteuid());
        assertThat(watcher.realUid(0)).isEmpty();
    }

    @Test
    void onExitThatThrows_doesNotStopLaterCallbacks() throws Exception {
        Process a = sleeper();
        Process b = sleeper();
        CountDownLatch threw = new CountDownLatch(1);
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch wa = watcher.watch(a.pid(), startTimeOf(a), () -> {
                    threw.countDown();
                    throw new IllegalStateException("test: callback failure");
                });
             ProcessWatcher.Watch wb = watcher.watch(b.pid(), startTimeOf(b), fired::countDown)) {
            a.destroyForcibly();
            assertThat(a.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(threw.await(1, TimeUnit.SECONDS)).as("the failing callback ran first").isTrue();
            b.destroyForcibly();
            assertThat(fired.await(1, TimeUnit.SECONDS)).isTrue();
        }
    }
}
