package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import spice.authority.os.ProcessWatcher;

/** Child {@code sleep 60} processes for the process-watcher tests; {@link #reap()} kills and reaps them all. */
final class Sleepers {
    private final List<Process> children = new ArrayList<>();

    /** A new child, without pipes: the parent's fd count must not change when the JDK closes them at exit. */
    Process start() throws IOException {
        File devNull = new File("/dev/null");
        Process p = new ProcessBuilder("sleep", "60").redirectInput(ProcessBuilder.Redirect.from(devNull))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        children.add(p);
        return p;
    }

    /**
     * Returns once {@code watcher}'s poll thread went round after this call: a new child's exit
     * was noticed and its callback ran. Whatever that thread noticed before (a watch firing when
     * it must not) was handed to the callback threads before it.
     */
    void awaitOneMoreRound(ProcessWatcher watcher) throws Exception {
        Process marker = start();
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch w = watcher.watch(marker.pid(), watcher.startTime(marker.pid()).orElseThrow(),
                fired::countDown)) {
            marker.destroyForcibly();
            assertThat(fired.await(5, TimeUnit.SECONDS)).as("the marker's exit is noticed").isTrue();
        }
    }

    /** Kills every child started so far and asserts that each is reaped. */
    void reap() throws InterruptedException {
        for (Process p : children) {
            p.destroyForcibly();
        }
        for (Process p : children) {
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("child %d reaped", p.pid()).isTrue();
        }
        children.clear();
    }
}
