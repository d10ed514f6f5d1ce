package spice.authority.app.runtime;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;

/** Counts requests in flight and refuses new ones once the helper is draining. */
@ApplicationScoped
public class RequestGate {
    private final Object lock = new Object();
    private int inFlight;
    private boolean closed;

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
        synchronized (lock) {
            closed = true;
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
