package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatcher;

/**
 * A host whose main thread exited while another thread runs: {@code /proc/PID/stat} shows the
 * thread-group leader as a zombie, yet the process lives (its pidfd is not readable). Such a host
 * must be reported alive, and its watch must not fire, until the whole process exits.
 */
class ZombieLeaderTest {
    private static final String SOURCE = """
            #include <pthread.h>
            #include <unistd.h>
            static void *worker(void *arg) { for (;;) pause(); return arg; }
            int main(void) {
                pthread_t t;
                if (pthread_create(&t, 0, worker, 0) != 0) return 1;
                pthread_exit(0);
            }
            """;

    private Path dir;
    private Process host;

    @BeforeAll
    static void linuxWithGcc() {
        assumeTrue(PosixPlatform.current().map(PosixPlatform::hasPidfd).orElse(false), "pidfd is Linux-only");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/gcc")), "needs gcc");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (host != null) {
            host.destroyForcibly();
            host.waitFor(10, TimeUnit.SECONDS);
        }
        if (dir != null) {
            TestTree.deleteTree(dir);
        }
    }

    @Test
    void leaderExitedOtherThreadsRun_isAlive_andItsWatchWaitsForTheRealExit() throws Exception {
        dir = Files.createTempDirectory("spice-zombie-leader-");
        Files.writeString(dir.resolve("leader.c"), SOURCE);
        Process cc = new ProcessBuilder("gcc", "-pthread", "-o", dir.resolve("leader").toString(), dir.resolve("leader.c").toString())
                .redirectErrorStream(true).start();
        assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(cc.exitValue()).as(new String(cc.getInputStream().readAllBytes())).isZero();

        host = new ProcessBuilder(dir.resolve("leader").toString()).start();
        long pid = host.pid();
        String stat = Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(10),
                () -> Files.readString(Path.of("/proc/" + pid + "/stat")), t -> t.matches("^\\d+ \\(leader\\) Z .*\\s*$"));
        assertThat(stat).as("the leader reads as a zombie").contains(" (leader) Z ");
        long start = ProcFs.startTimeInAnyState(pid);

        PidfdProcessWatcher watcher = PidfdProcessWatcher.instance();
        assertThat(watcher.liveness(pid, start)).as("a zombie leader with live threads is alive").isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(watcher.liveness(pid, start + 1)).as("another start time is still a proof").isEqualTo(ProcessWatcher.Liveness.DEAD);
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(pid, start, fired::countDown)) {
            Sleepers markers = new Sleepers();
            try {
                markers.awaitOneMoreRound(watcher); // it polled the zombie's pidfd
            } finally {
                markers.reap();
            }
            assertThat(fired.getCount()).as("no exit while a thread runs").isOne();
            assertThat(w.liveness()).isEqualTo(ProcessWatcher.Liveness.ALIVE);
            host.destroyForcibly();
            assertThat(host.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(fired.await(5, TimeUnit.SECONDS)).as("the real exit fires").isTrue();
            assertThat(watcher.liveness(pid, start)).isEqualTo(ProcessWatcher.Liveness.DEAD);
        }
    }
}
