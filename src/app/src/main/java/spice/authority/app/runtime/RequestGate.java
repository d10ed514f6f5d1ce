package spice.authority.app.runtime;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;

/**
 * Counts requests in flight and refuses new ones once the helper is draining.
 *
 * <p><b>Guarantees.</b> After {@link #close()} no request enters, and every action registered
 * with {@link #onClose} has run once (those registered later run at once): requests that have
 * not reached a resource yet (a body still arriving) can be ended then instead of being waited for.
 */
@ApplicationScoped
public class RequestGate {
    private final Object lock = new Object();
    private int inFlight;
    private boolean closed;
    private final java.util.List<Runnable> onClose = new java.util.ArrayList<>();

    /** Returns false when draining: the caller must answer {@code closing}. */
    public boolean enter() {
        synchronized (lock) {
            if (closed) {
                return false;
            }
            inFlight++;
            return true;
        }
    }

    public void exit() {
        synchronized (lock) {
            inFlight--;
            if (inFlight == 0) {
                lock.notifyAll();
            }
        }
    }

    public void close() {
        java.util.List<Runnable> actions;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            actions = java.util.List.copyOf(onClose);
            onClose.clear();
        }
        for (Runnable r : actions) {
            r.run();
        }
    }

    /** Runs {@code action} when the gate closes (at once when it is closed already). */
    public void onClose(Runnable action) {
        synchronized (lock) {
            if (!closed) {
                onClose.add(action);
                return;
            }
        }
        action.run();
    }

    /** Whether the gate is closed (the helper is draining). */
    public boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    public int inFlight() {
        synchronized (lock) {
            return inFlight;
        }
    }

    public boolean awaitIdle(Duration max) {
        spice.authority.core.Cancellation deadline = spice.authority.core.Cancellation.withTimeout(max); // any length, no overflow
        synchronized (lock) {
            while (inFlight > 0) {
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    return false;
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }
}
