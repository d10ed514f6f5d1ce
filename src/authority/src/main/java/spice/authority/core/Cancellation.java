package spice.authority.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A caller's cancellation signal and optional deadline (the context of wire-format.md e.4).
 * Operations check it on entry and once more right before the filesystem writer is invoked;
 * after that point cancellation no longer matters, because the write may already have happened.
 * Thread-safe.
 */
public final class Cancellation {
    private static final Cancellation NONE = new Cancellation(false, 0);
    /** Timeouts this long or longer are no deadline ({@code System.nanoTime} differences stay exact below 2^63 ns). */
    private static final Duration FOREVER = Duration.ofDays(365L * 100);

    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final boolean hasDeadline;
    /** A {@code System.nanoTime} value; compared by difference, so its sign does not matter. */
    private final long deadlineNanos;

    private Cancellation(boolean hasDeadline, long deadlineNanos) {
        this.hasDeadline = hasDeadline;
        this.deadlineNanos = deadlineNanos;
    }

    /** Never cancelled. */
    public static Cancellation none() {
        return NONE;
    }

    /** Cancellable by {@link #cancel()}, no deadline. */
    public static Cancellation create() {
        return new Cancellation(false, 0);
    }

    /** Cancelled by {@link #cancel()} or once {@code timeout} has passed. */
    public static Cancellation withTimeout(Duration timeout) {
        if (timeout.compareTo(FOREVER) >= 0) {
            return create();
        }
        return new Cancellation(true, System.nanoTime() + timeout.toNanos());
    }

    public void cancel() {
        if (this != NONE) {
            cancelled.set(true);
        }
    }

    public boolean isCancelled() {
        return cancelled.get() || (hasDeadline && System.nanoTime() - deadlineNanos >= 0);
    }

    /**
     * Nanoseconds left until the deadline: 0 once it has passed, {@link Long#MAX_VALUE} without
     * one. For waits bounded by a {@link Duration} of any length (see {@link #withTimeout}).
     */
    public long remainingNanos() {
        return hasDeadline ? Math.max(0, deadlineNanos - System.nanoTime()) : Long.MAX_VALUE;
    }

    /** Throws {@link AuthorityException.Cancelled} when cancelled or past the deadline. */
    void check(String what) throws AuthorityException.Cancelled {
        if (isCancelled()) {
            throw new AuthorityException.Cancelled(what + ": cancelled before anything was written; safe to retry");
        }
    }
}
