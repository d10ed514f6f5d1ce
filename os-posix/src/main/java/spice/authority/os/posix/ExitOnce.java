package spice.authority.os.posix;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.os.ProcessWatcher.Liveness;

/**
 * The once-only outcome of one watch, shared by the pidfd and kqueue watchers: armed, then either
 * fired (its {@code onExit} runs once, on the callback executor) or closed (it never runs).
 *
 * <p><b>Guarantees.</b> {@code onExit} runs at most once, never after {@link #close()} returned,
 * and an exception it throws is logged, never propagated to the watcher's poll thread; once fired
 * it runs, on the executor or, when that refuses it, on the thread that fired.
 */
final class ExitOnce {
    private static final System.Logger LOG = System.getLogger(ExitOnce.class.getName());
    private static final int ARMED = 0;
    private static final int PENDING = 1;
    private static final int DONE = 2;
    private static final int CLOSED = 3;

    private final long pid;
    private final Runnable onExit;
    private final Executor callbacks;
    private final AtomicInteger state = new AtomicInteger(ARMED);

    ExitOnce(long pid, Runnable onExit, Executor callbacks) {
        this.pid = pid;
        this.onExit = onExit;
        this.callbacks = callbacks;
    }

    /**
     * The process is proven gone: {@code onExit} is scheduled, once, unless closed. When the
     * executor cannot take it (no thread can be started, no memory), it runs here, on the caller's
     * thread, rather than never: a dead host's session would otherwise keep its leases until
     * something else touched it.
     */
    void fire() {
        if (state.compareAndSet(ARMED, PENDING)) {
            try {
                callbacks.execute(this::run);
            } catch (RuntimeException | Error e) {
                run();
            }
        }
    }

    private void run() {
        if (state.compareAndSet(PENDING, DONE)) {
            try {
                onExit.run();
            } catch (RuntimeException | Error e) {
                try {
                    LOG.log(System.Logger.Level.ERROR, "process watcher: onExit of pid " + pid + " failed", e);
                } catch (RuntimeException | Error logFailed) {
                    // nothing to report with; the caller (a poll loop firing other watches) goes on
                }
            }
        }
    }

    /**
     * What the outcome alone proves: {@code DEAD} once fired, {@code UNKNOWN} once closed, and
     * {@code null} while armed (the caller must inspect the process).
     */
    Liveness settled() {
        int s = state.get();
        if (s == PENDING || s == DONE) {
            return Liveness.DEAD;
        }
        return s == CLOSED ? Liveness.UNKNOWN : null;
    }

    /** A pending {@code onExit} that has not started never runs. */
    void close() {
        state.compareAndSet(ARMED, CLOSED);
        state.compareAndSet(PENDING, CLOSED);
    }
}
