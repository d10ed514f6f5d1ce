package spice.authority.os.posix;

/**
 * The directory flush of {@link PosixSecureDirectory#writeAtomically}, shared between concurrent
 * writers (group commit): a writer whose rename has returned joins the open batch; one writer of
 * the batch (the leader) closes it and calls {@code fsync} on the directory once for all of them;
 * every member returns, or fails, with that call's outcome. Writers that arrive while a flush is in
 * progress form the next batch, flushed by the next call, never by the one in progress.
 *
 * <p><b>Guarantees.</b> {@link #flush} returns normally only after an {@code fsync} of the
 * directory that <em>started after</em> the caller called {@code flush} (so after its rename
 * returned) has completed successfully; a failed {@code fsync} fails every member of its batch.
 * At most one {@code fsync} of this directory is in flight through this object; the file data
 * flushes of concurrent writers are not serialized by it. A waiting writer is not interruptible
 * (it cannot learn the outcome any other way); an interrupt is kept for after the wait.
 *
 * <p><b>A failed {@code fsync} is final.</b> Once the kernel has reported a failed flush of this
 * directory, every later {@link #flush} fails too, without calling {@code fsync} again: the
 * kernel reports a writeback error once per open file and may have dropped the entries it could
 * not write, so a later {@code fsync} that succeeds proves nothing about renames made before it.
 * Only opening the directory again (a restart of the helper) clears it.
 */
final class DirectoryFlush {
    private final Syscalls sys;
    private final int dirfd;
    private final Object lock = new Object();
    /** The batch that new writers join; its flush has not started. Guarded by {@link #lock}. */
    private Batch open = new Batch();
    /** Whether a leader is flushing (a batch that is no longer {@link #open}). Guarded by {@link #lock}. */
    private boolean flushing;
    /** The errno of the first failed {@code fsync}, 0 while none failed. Guarded by {@link #lock}. */
    private int failedErrno;

    /** One batch of writers: done once its flush returned, with its failure if it failed. */
    private static final class Batch {
        boolean done;
        Throwable failure;
    }

    DirectoryFlush(Syscalls sys, int dirfd) {
        this.sys = sys;
        this.dirfd = dirfd;
    }

    /** The errno of the flush that failed, 0 while none did. */
    int failedErrno() {
        synchronized (lock) {
            return failedErrno;
        }
    }

    /**
     * Makes every rename in this directory that returned before this call durable.
     *
     * @throws PosixException the batch's {@code fsync} failed (for every member alike)
     */
    void flush() throws PosixException {
        Batch mine;
        boolean interrupted = false;
        synchronized (lock) {
            mine = open;
            try {
                while (!mine.done) {
                    if (!flushing) {
                        if (failedErrno != 0) {
                            // Every writer that would lead a flush after a failed one (also those
                            // waiting in the batch after it, woken by its end) fails here.
                            throw new PosixException(failedErrno, "fsync (a flush of this directory failed earlier: "
                                    + "no later one can prove a rename durable until the directory is opened again)");
                        }
                        // Leader: close the batch before the flush starts, so that every member's
                        // rename returned before the fsync below is called. The next batch exists
                        // before the flag is set: an Error here leaves nobody waiting forever.
                        Batch next = new Batch();
                        open = next;
                        flushing = true;
                        break;
                    }
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            if (mine.done) {
                rethrow(mine.failure);
                return;
            }
        }
        Throwable failure = null;
        try {
            sys.fsync(dirfd);
        } catch (PosixException | RuntimeException | Error e) {
            failure = e;
        } finally {
            synchronized (lock) {
                if (failure != null && failedErrno == 0) {
                    // Any abnormal end, an Error included (the kernel's answer may have been lost
                    // with it): the flush's outcome is unknown, and so is every later one's.
                    failedErrno = failure instanceof PosixException e ? e.errno() : Libc.P.errnoValue("EIO");
                }
                mine.done = true;
                mine.failure = failure;
                flushing = false;
                lock.notifyAll();
            }
        }
        rethrow(failure);
    }

    /** A batch's failure, to each member: a fresh errno exception (stackless), or the unchecked one itself. */
    private static void rethrow(Throwable failure) throws PosixException {
        switch (failure) {
            case null -> { }
            case PosixException e -> throw new PosixException(e.errno(), e.call());
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> throw new IllegalStateException(failure);
        }
    }
}
