package spice.authority.core;

import java.time.Duration;

/**
 * The lifecycle of a {@link RunAuthority}: open, closing, closed; and the run and import leases
 * that keep it from closing under them.
 *
 * <p><b>Guarantees.</b> Once closing, no lease is granted ({@code closed}). The shutdown action
 * runs exactly once: from {@link #close(Duration)} when no lease is outstanding, else from the
 * release of the last lease. Thread-safe.
 */
final class Leases {
    private final Object stateLock = new Object();
    private final Runnable shutdown;
    private int leases;
    private boolean closing;
    private boolean shutDown;

    /** {@code shutdown} closes what the leases protect; it runs once, under this object's lock. */
    Leases(Runnable shutdown) {
        this.shutdown = shutdown;
    }

    /** One more lease; refused once closing. */
    void acquire() throws AuthorityException.Closed {
        synchronized (stateLock) {
            if (closing || shutDown) {
                throw new AuthorityException.Closed("run authority is " + (shutDown ? "closed" : "closing") + "; no new work is accepted");
            }
            leases++;
        }
    }

    /** Ends one lease; the last one completes a pending shutdown. */
    void release() {
        synchronized (stateLock) {
            leases--;
            if (leases == 0) {
                if (closing) {
                    shutdownLocked();
                }
                stateLock.notifyAll();
            }
        }
    }

    int outstanding() {
        synchronized (stateLock) {
            return leases;
        }
    }

    /** "open", "closing" or "closed". */
    String state() {
        synchronized (stateLock) {
            return shutDown ? "closed" : closing ? "closing" : "open";
        }
    }

    /**
     * Rejects new leases, waits up to {@code wait} for outstanding ones, then shuts down. When
     * leases remain, throws {@code busy}; the state stays closing and the last lease to end
     * completes the shutdown.
     */
    void close(Duration wait) throws AuthorityException.Busy {
        Cancellation deadline = Cancellation.withTimeout(wait); // any length, no overflow
        synchronized (stateLock) {
            closing = true;
            while (leases > 0 && !shutDown) {
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    throw new AuthorityException.Busy("authority closing: " + leases + " run or import lease(s) still outstanding");
                }
                try {
                    stateLock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AuthorityException.Busy("authority closing: interrupted while " + leases + " lease(s) remain");
                }
            }
            shutdownLocked();
        }
    }

    private void shutdownLocked() {
        if (!shutDown) {
            shutDown = true;
            try {
                shutdown.run();
            } finally {
                stateLock.notifyAll();
            }
        }
    }
}
