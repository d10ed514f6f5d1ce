package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatcher.Liveness;

/** The once-only outcome of a watch: fired once, on the executor or, when that refuses, in place. */
class ExitOnceTest {

    @Test
    void fired_runsOnExitOnceOnTheExecutor() {
        AtomicInteger ran = new AtomicInteger();
        List<Runnable> queued = new ArrayList<>();
        ExitOnce once = new ExitOnce(42, ran::incrementAndGet, queued::add);
        once.fire();
        once.fire();
        assertThat(queued).hasSize(1);
        assertThat(ran).hasValue(0);
        queued.get(0).run();
        queued.get(0).run();
        assertThat(ran).hasValue(1);
        assertThat(once.settled()).isEqualTo(Liveness.DEAD);
    }

    /** No thread for the callback (the system has none left, or no memory): the exit is acted on anyway. */
    @Test
    void executorThatCannotTakeTheCallback_onExitRunsInPlace_once() {
        List<Throwable> refusals = List.of(new RejectedExecutionException("test"),
                new OutOfMemoryError("test: unable to create native thread"));
        for (Throwable refusal : refusals) {
            AtomicInteger ran = new AtomicInteger();
            Executor refusing = task -> {
                if (refusal instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) refusal;
            };
            ExitOnce once = new ExitOnce(42, ran::incrementAndGet, refusing);
            once.fire();
            once.fire();
            assertThat(ran).as(refusal.toString()).hasValue(1);
            assertThat(once.settled()).isEqualTo(Liveness.DEAD);
        }
    }

    @Test
    void closedBeforeItRan_neverRuns() {
        AtomicInteger ran = new AtomicInteger();
        List<Runnable> queued = new ArrayList<>();
        ExitOnce once = new ExitOnce(42, ran::incrementAndGet, queued::add);
        once.fire();
        once.close();
        queued.forEach(Runnable::run);
        assertThat(ran).hasValue(0);
        assertThat(once.settled()).isEqualTo(Liveness.UNKNOWN);
    }
}
