package spice.authority.host.engine;

import java.io.IOException;

/**
 * A clean-up call to the helper (a release or an abort that undoes what a failed or interrupted
 * call left), made with the thread's interrupt status cleared and the status restored after it:
 * the transport ends at once on an interrupted thread, so the clean-up would otherwise never reach
 * the helper while the caller is told it happened.
 */
@FunctionalInterface
interface CleanUp {
    void run() throws IOException;

    /** Runs {@code call} uninterrupted, then restores the thread's interrupt status. */
    static void uninterrupted(CleanUp call) throws IOException {
        uninterrupted(() -> {
            call.run();
            return null;
        });
    }

    /** A call with an answer, for {@link #uninterrupted(Answering)}. */
    @FunctionalInterface
    interface Answering<T> {
        T call() throws IOException;
    }

    /** {@link #uninterrupted(CleanUp)} for a call whose answer is needed (a FAILED tombstone's sign). */
    static <T> T uninterrupted(Answering<T> call) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            return call.call();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
