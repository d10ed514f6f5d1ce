package spice.authority.app.install;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real command runner (systemctl, launchctl, schtasks): a command that never exits is killed
 * and reported as a timeout (124); standard output is read while the child runs, so a large
 * output cannot fill the pipe and deadlock; nothing it started is left running.
 */
// SEPARATE_THREAD: a runner that blocks in a pipe read cannot be interrupted, so it must fail the
// test rather than hang the build.
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SystemCommandRunnerTest {
    private Set<Long> childrenBefore;

    @BeforeEach
    void rememberChildren() {
        childrenBefore = liveChildren();
    }

    @AfterEach
    void noChildLeftRunning() throws InterruptedException {
        Set<Long> left = awaitNoNewChildren(Duration.ofSeconds(10));
        // Killed here so that a failing run leaves nothing behind either.
        left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        assertThat(left).as("children of the test JVM left running").isEmpty();
    }

    @Test
    void production_timeoutIsSixtySeconds() {
        assertThat(CommandRunner.system()).isInstanceOfSatisfying(SystemCommandRunner.class,
                r -> assertThat(r.timeout()).isEqualTo(Duration.ofSeconds(60)));
    }

    @Test
    void commandThatNeverExits_withItsOutputOpen_isKilledAndReportedAsATimeout(@TempDir Path tmp) throws Exception {
        Path pidFile = tmp.resolve("pid");
        // The shell writes its pid, some output, then becomes 'sleep' (exec: same pid, stdout
        // still open), so the reader thread blocks for as long as the child lives.
        List<String> argv = List.of("sh", "-c", "echo $$ > \"$1\"; echo started; exec sleep 1000", "sh", pidFile.toString());
        CommandRunner runner = new SystemCommandRunner(Duration.ofSeconds(1));

        long t0 = System.nanoTime();
        CommandRunner.Result r = runner.run(argv);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);

        assertThat(r).isEqualTo(new CommandRunner.Result(124, ""));
        assertThat(took).isBetween(Duration.ofMillis(900), Duration.ofSeconds(15));
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        assertThat(awaitGone(pid, Duration.ofSeconds(10))).as("the timed-out child %d was killed", pid).isTrue();
    }

    @Test
    void aChildTheCommandStarted_isKilledWithIt(@TempDir Path tmp) throws Exception {
        Path pidFile = tmp.resolve("grandchild");
        // The shell starts a background sleep (which inherits standard output) and waits for it.
        List<String> argv = List.of("sh", "-c", "sleep 1000 & echo $! > \"$1\"; wait", "sh", pidFile.toString());
        CommandRunner.Result r = new SystemCommandRunner(Duration.ofSeconds(1)).run(argv);
        assertThat(r).isEqualTo(new CommandRunner.Result(124, ""));
        long grandchild = Long.parseLong(Files.readString(pidFile).strip());
        assertThat(awaitGone(grandchild, Duration.ofSeconds(10))).as("the command's own child %d was killed", grandchild).isTrue();
    }

    @Test
    void commandThatNeverExits_withoutOutput_isKilledAndReportedAsATimeout() {
        CommandRunner runner = new SystemCommandRunner(Duration.ofSeconds(1));
        long t0 = System.nanoTime();
        CommandRunner.Result r = runner.run(List.of("sleep", "1000"));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);

        assertThat(r).isEqualTo(new CommandRunner.Result(124, ""));
        assertThat(took).isBetween(Duration.ofMillis(900), Duration.ofSeconds(15));
    }

    @Test
    void commandPrintingMoreThanAPipeBuffer_completes_withAllItsOutput() {
        int size = 1 << 20; // 1 MiB, far more than a pipe buffer (64 KiB on Linux)
        List<String> argv = List.of("sh", "-c", "head -c " + size + " /dev/zero | tr '\\000' x; echo; echo end");
        Duration timeout = Duration.ofSeconds(20);
        CommandRunner runner = new SystemCommandRunner(timeout);

        long t0 = System.nanoTime();
        CommandRunner.Result r = runner.run(argv);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);

        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).hasSize(size + "\nend".length()).startsWith("xxxx").endsWith("x\nend");
        assertThat(r.out().chars().limit(size).allMatch(c -> c == 'x')).isTrue();
        assertThat(took).as("finished on its own, not by the timeout").isLessThan(timeout);
    }

    @Test
    void exitCodeAndTrimmedStandardOutput_standardErrorDiscarded() {
        CommandRunner.Result r = new SystemCommandRunner(Duration.ofSeconds(20))
                .run(List.of("sh", "-c", "echo '  active  '; echo oops >&2; exit 3"));
        assertThat(r).isEqualTo(new CommandRunner.Result(3, "active"));
    }

    @Test
    void absentCommand_is127() {
        CommandRunner.Result r = new SystemCommandRunner(Duration.ofSeconds(20))
                .run(List.of("/nonexistent/spice-authority-no-such-command"));
        assertThat(r).isEqualTo(new CommandRunner.Result(127, ""));
    }

    /**
     * A bare name is looked up in the system's directories, never in PATH: a {@code systemctl}
     * planted early in the user's PATH is not the one run.
     */
    @Test
    void bareName_resolvedInSystemDirectories_notInPath(@TempDir Path tmp) throws IOException {
        Path planted = tmp.resolve("sh");
        Files.writeString(planted, "#!/bin/sh\necho planted\n");
        Files.setPosixFilePermissions(planted, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));

        assertThat(SystemCommandRunner.resolve("sh")).get().asString().matches("/(usr/)?bin/sh");
        assertThat(SystemCommandRunner.resolve("spice-authority-no-such-command")).isEmpty();
        assertThat(SystemCommandRunner.resolve(planted.toString())).contains(planted.toString());
        CommandRunner.Result absent = new SystemCommandRunner(Duration.ofSeconds(20)).run(List.of("spice-authority-no-such-command"));
        assertThat(absent).isEqualTo(new CommandRunner.Result(127, ""));
        // What runs is the resolved program: the shell sees its absolute path as $0, not the bare name.
        CommandRunner.Result r = new SystemCommandRunner(Duration.ofSeconds(20)).run(List.of("sh", "-c", "echo \"$0\""));
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).matches("/(usr/)?bin/sh");
    }

    private static Set<Long> liveChildren() {
        return ProcessHandle.current().children().filter(ProcessHandle::isAlive).map(ProcessHandle::pid).collect(Collectors.toSet());
    }

    /** The children started since the test began that are still there after {@code wait}. */
    private Set<Long> awaitNoNewChildren(Duration wait) throws InterruptedException {
        return spice.authority.app.it.Poll.until(wait, Duration.ofMillis(20), () -> {
            Set<Long> now = liveChildren();
            now.removeAll(childrenBefore);
            return now;
        }, Set::isEmpty);
    }

    /** Whether the process {@code pid} is gone within {@code wait}. */
    private static boolean awaitGone(long pid, Duration wait) throws InterruptedException {
        long self = ProcessHandle.current().pid();
        // Still there: alive and either our child or still the 'sleep' (had it been orphaned).
        return !spice.authority.app.it.Poll.until(wait, Duration.ofMillis(20), () -> ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .map(h -> h.parent().map(p -> p.pid() == self).orElse(false)
                        || h.info().command().map(c -> c.endsWith("/sleep")).orElse(false))
                .orElse(false), there -> !there);
    }
}
