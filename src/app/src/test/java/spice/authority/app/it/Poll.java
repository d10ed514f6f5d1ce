package spice.authority.app.it;

import java.time.Duration;
import java.util.function.Predicate;

/**
 * The one wait of the end-to-end tests: a condition polled until it holds or a deadline passes,
 * for the conditions that give no notification (another process's log, its metrics, its exit
 * watcher, a kernel fault taking effect).
 */
public final class Poll {
    private Poll() {
    }

    /** A look at the condition; it may fail as its caller may. */
    @FunctionalInterface
    public interface Probe<T, E extends Exception> {
        T call() throws E;
    }

    /**
     * Calls {@code probe} until {@code done} accepts its answer or {@code timeout} passed, every
     * {@code interval}; returns the last answer, which the caller asserts on.
     */
    public static <T, E extends Exception> T until(Duration timeout, Duration interval, Probe<T, E> probe, Predicate<? super T> done)
            throws E, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        T answer = probe.call();
        while (!done.test(answer) && System.nanoTime() < deadline) {
            Thread.sleep(interval.toMillis()); // the poll interval, not a wait for something to happen
            answer = probe.call();
        }
        return answer;
    }
}
