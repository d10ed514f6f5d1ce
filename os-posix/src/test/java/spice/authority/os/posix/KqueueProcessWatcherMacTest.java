package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.ProcessWatcher.Liveness;
import spice.authority.os.SecureDirectories;

/**
 * The kqueue watcher against the real macOS kernel, mirroring {@code ProcessWatcherTest},
 * {@code WatcherFailClosedTest} and {@code ZombieLeaderTest} of Linux: a child that exits,
 * SIGKILL, a wrong start time (pid reuse), a zombie, descriptor exhaustion, descriptor leaks.
 *
 * <p>NOT RUN HERE: macOS only; it has never run (this project's machines are Linux). The same
 * logic runs on Linux against a simulated kernel in {@code KqueueProcessWatcherTest}.
 */
@EnabledOnOs(OS.MAC)
class KqueueProcessWatcherMacTest {

    private static ProcessWatcher watcher;
    private final Sleepers sleepers = new Sleepers();
    private final List<Process> others = new ArrayList<>();

    @BeforeAll
    static void macOnly() {
        watcher = SecureDirectories.provider().processWatcher();
    }

    @AfterEach
    void reap() throws InterruptedException {
        sleepers.reap();
        for (Process p : others) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static long startTimeOf(Process p) throws ProcessWatchException {
        return watcher.startTime(p.pid()).orElseThrow();
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/dev/fd"))) {
            return s.count();
        }
    }

    @Test
    void provider_onMacos_returnsTheKqueueWatcher() {
        assertThat(watcher).isInstanceOf(KqueueProcessWatcher.class);
        assertThat(new PosixSecureDirectoryProvider().processWatcher()).isSameAs(watcher);
    }

    @Test
    void watch_childKilledWithSigkill_firesWithinOneSecond_once() throws Exception {
        Process child = sleepers.start();
        long st = startTimeOf(child);
        AtomicInteger calls = new AtomicInteger();
        AtomicLong firedAt = new AtomicLong();
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(child.pid(), st, () -> {
            firedAt.set(System.nanoTime());
            calls.incrementAndGet();
            fired.countDown();
        })) {
            sleepers.awaitOneMoreRound(watcher);
            assertThat(calls).hasValue(0);
            assertThat(w.liveness()).isEqualTo(Liveness.ALIVE);
            long killedAt = System.nanoTime();
            child.destroyForcibly();
            assertThat(fired.await(1, TimeUnit.SECONDS)).isTrue();
            System.out.printf("KqueueProcessWatcherMacTest: exit notification latency after SIGKILL: %.3f ms%n",
                    (firedAt.get() - killedAt) / 1e6);
            sleepers.awaitOneMoreRound(watcher);
            assertThat(calls).hasValue(1);
            assertThat(w.liveness()).isEqualTo(Liveness.DEAD);
        }
    }

    @Test
    void watch_childThatExitsByItself_fires() throws Exception {
        Process child = new ProcessBuilder("sh", "-c", "sleep 0.3").start();
        others.add(child);
        long st = startTimeOf(child);
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(child.pid(), st, fired::countDown)) {
            assertThat(fired.await(5, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(watcher.liveness(child.pid(), st)).isEqualTo(Liveness.DEAD);
    }

    @Test
    void alreadyDead_andWrongStartTime_fireAtOnce() throws Exception {
        Process child = sleepers.start();
        long st = startTimeOf(child);
        assertThat(watcher.liveness(child.pid(), st)).isEqualTo(Liveness.ALIVE);
        CountDownLatch other = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(child.pid(), st + 1, other::countDown)) {
            assertThat(other.await(1, TimeUnit.SECONDS)).as("another start time at the pid is a reused pid").isTrue();
        }
        assertThat(watcher.liveness(child.pid(), st + 1)).isEqualTo(Liveness.DEAD);
        assertThat(child.isAlive()).isTrue();
        child.destroyForcibly();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(watcher.startTime(child.pid())).isEmpty();
        assertThat(watcher.liveness(child.pid(), st)).isEqualTo(Liveness.DEAD);
        CountDownLatch gone = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(child.pid(), st, gone::countDown)) {
            assertThat(gone.await(1, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void zombie_countsAsExited() throws Exception {
        // sh starts a short child, then execs a long sleep that never reaps it: a zombie.
        Process parent = new ProcessBuilder("sh", "-c", "sleep 0.2 & echo $!; exec sleep 60").start();
        others.add(parent);
        long zombie = Long.parseLong(new BufferedReader(new InputStreamReader(parent.getInputStream(),
                StandardCharsets.US_ASCII)).readLine().trim());
        long st = watcher.startTime(zombie).orElseThrow();
        Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20), () -> watcher.startTime(zombie),
                t -> t.isEmpty());
        Process ps = new ProcessBuilder("ps", "-o", "stat=", "-p", Long.toString(zombie)).start();
        String stat = new String(ps.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(stat).as("the child is a zombie, not reaped").startsWith("Z");
        assertThat(watcher.startTime(zombie)).isEmpty();
        assertThat(watcher.liveness(zombie, st)).isEqualTo(Liveness.DEAD);
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(zombie, st, fired::countDown)) {
            assertThat(fired.await(1, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void descriptorsExhausted_watchRefused_livenessStillKnown_neverDead() throws Exception {
        Process child = sleepers.start();
        long st = startTimeOf(child);
        // A watcher of its own: the JVM-wide one has its kqueue already.
        KqueueProcessWatcher fresh = new KqueueProcessWatcher(DarwinSyscalls.LIBC, PosixPlatform.current().orElseThrow());
        Path file = Files.createTempFile("spice-emfile-", ".tmp");
        List<SeekableByteChannel> hog = new ArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        try {
            try {
                for (int i = 0; i < 200_000; i++) {
                    hog.add(Files.newByteChannel(file, StandardOpenOption.READ));
                }
            } catch (IOException e) {
                // EMFILE: every descriptor is taken
            }
            assertThatThrownBy(() -> fresh.watch(child.pid(), st, calls::incrementAndGet))
                    .isInstanceOf(ProcessWatchException.class);
            assertThat(fresh.liveness(child.pid(), st)).as("proc_pidinfo needs no descriptor").isEqualTo(Liveness.ALIVE);
            assertThat(watcher.liveness(child.pid(), st)).isNotEqualTo(Liveness.DEAD);
        } finally {
            for (SeekableByteChannel c : hog) {
                c.close();
            }
            Files.delete(file);
        }
        assertThat(calls).hasValue(0);
        try (ProcessWatcher.Watch w = fresh.watch(child.pid(), st, calls::incrementAndGet)) {
            assertThat(w.liveness()).isEqualTo(Liveness.ALIVE);
        }
    }

    @Test
    void watchAndClose_200Cycles_andFired200_leaveNoDescriptor() throws Exception {
        Process child = sleepers.start();
        long st = startTimeOf(child);
        watcher.watch(child.pid(), st, () -> {}).close(); // the kqueue and its thread exist from here
        long baseline = openFds();
        AtomicInteger calls = new AtomicInteger();
        for (int i = 0; i < 200; i++) {
            watcher.watch(child.pid(), st, calls::incrementAndGet).close();
        }
        assertThat(openFds()).isEqualTo(baseline);
        assertThat(calls).hasValue(0);
        List<Process> batch = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            batch.add(sleepers.start());
        }
        CountDownLatch fired = new CountDownLatch(200);
        List<ProcessWatcher.Watch> watches = new ArrayList<>();
        for (Process p : batch) {
            long s = startTimeOf(p);
            for (int j = 0; j < 10; j++) {
                watches.add(watcher.watch(p.pid(), s, fired::countDown));
            }
        }
        batch.forEach(Process::destroyForcibly);
        assertThat(fired.await(5, TimeUnit.SECONDS)).as("%d left", fired.getCount()).isTrue();
        watches.forEach(ProcessWatcher.Watch::close);
        assertThat(((KqueueProcessWatcher) watcher).registeredPids()).isLessThanOrEqualTo(1);
    }

    @Test
    void realUidAndParentPid_ofAChild() throws Exception {
        Process child = sleepers.start();
        assertThat(watcher.realUid(child.pid())).hasValue(Libc.geteuid());
        assertThat(watcher.parentPid(child.pid())).hasValue(ProcessHandle.current().pid());
        assertThat(watcher.realUid(ProcessHandle.current().pid())).hasValue(Libc.geteuid());
    }
}
