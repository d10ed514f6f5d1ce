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
    private static final Cancellation NONE = new Cancellation(Long.MAX_VALUE);

    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final long deadlineNanos;

    private Cancellation(long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
    }

    /** Never cancelled. */
    public static Cancellation none() {
        return NONE;
    }

    /** Cancellable by {@link #cancel()}, no deadline. */
    public static Cancellation create() {
        return new Cancellation(Long.MAX_VALUE);
    }

    /** Cancelled by {@link #cancel()} or once {@code timeout} has passed. */
    public static Cancellation withTimeout(Duration timeout) {
        long now = System.nanoTime();
        long nanos = timeout.toNanos();
        return new Cancellation(nanos >= Long.MAX_VALUE - now ? Long.MAX_VALUE : now + nanos);
    }

    public void cancel() {
        if (this != NONE) {
            cancelled.set(true);
        }
    }

    public boolean isCancelled() {
        return cancelled.get() || (deadlineNanos != Long.MAX_VALUE && System.nanoTime() - deadlineNanos >= 0);
    }

    /** Throws {@link AuthorityException.Cancelled} when cancelled or past the deadline. */
    void check(String what) throws AuthorityException.Cancelled {
        if (isCancelled()) {
            throw new AuthorityException.Cancelled(what + ": cancelled before anything was written; safe to retry");
        }
    }
}
