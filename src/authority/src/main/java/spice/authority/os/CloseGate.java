package spice.authority.os;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * The close discipline of a {@link SecureDirectory} that holds one OS handle (a descriptor on
 * POSIX, a handle on Windows): operations {@link #enter} and {@link #exit} around every use of the
 * handle, and {@link #close} releases it once, only after every operation in progress has exited.
 *
 * <p><b>Guarantees.</b> The handle is never released while an operation holds it, so its number
 * cannot be reused by another open in the middle of an operation; after {@code close}, {@code enter}
 * fails and the release never runs again. Operations run concurrently with each other.
 */
public final class CloseGate {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile boolean closed; // written under the write lock

    /**
     * Enters an operation; pair it with {@link #exit} in a {@code finally}.
     *
     * @param shown the directory as messages name it, asked only when closed
     * @throws IllegalStateException when the gate is closed
     */
    public void enter(Supplier<String> shown) {
        lock.readLock().lock();
        if (closed) {
            lock.readLock().unlock();
            throw new IllegalStateException("secure directory is closed: " + shown.get());
        }
    }

    /** Leaves an operation that {@link #enter} admitted. */
    public void exit() {
        lock.readLock().unlock();
    }

    /**
     * Closes the gate: waits for the operations in progress, then runs {@code release} once (never
     * again on a later call, whether or not it threw).
     */
    public void close(Runnable release) {
        lock.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                release.run();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Whether {@link #close} was called. */
    public boolean isClosed() {
        return closed;
    }
}
