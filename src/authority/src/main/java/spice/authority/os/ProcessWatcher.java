package spice.authority.os;

import java.util.OptionalLong;

/**
 * Identifies host processes and tells the helper promptly when one exits, so that a session
 * bound to that process can be closed (ARCHITECTURE.md, "Sessions and leases").
 *
 * <p>Obtain it from the platform provider: {@code SecureDirectories.provider().processWatcher()}.
 * One instance per JVM; it is thread-safe.
 *
 * <p>A process is named by its pid <em>and</em> its start time: a pid alone can be reused by
 * an unrelated process after the original one exits. A start time is an opaque number,
 * comparable only for equality and only within one boot (on Linux the {@code starttime}
 * field of {@code /proc/<pid>/stat}, in clock ticks since boot).
 *
 * <p><b>Guarantees.</b>
 * <ul>
 *   <li>A process that has exited is never reported alive, and a new process that has reused
 *       the pid is never taken for the old one: {@link #liveness} and {@link #watch} compare
 *       the start time. A zombie (exited, not yet reaped) counts as exited.</li>
 *   <li>Unknown is not dead: a check that fails (descriptor or memory exhaustion, an
 *       unreadable {@code /proc}) answers {@link Liveness#UNKNOWN} or throws
 *       {@link ProcessWatchException}; it never reports a death and never fires a watch. Only
 *       a proof (the kernel's exit notification, "no such process", or another start time
 *       at the pid) does.</li>
 *   <li>Each {@link #watch} calls its {@code onExit} at most once, and exactly once unless the
 *       watch is closed first and unless the process never exits. It is called within
 *       milliseconds of the exit (the kernel notifies; nothing polls on a timer), or at once
 *       when the process is proven already gone or the pid now belongs to a process with
 *       another start time.</li>
 *   <li>{@code onExit} never runs while a lock of the watcher is held; it runs on a small
 *       daemon executor shared by all watches, so it may block briefly but should not block for
 *       long. Only when that executor cannot take it (no thread can be started, no memory) does
 *       it run on the thread that proved the exit: the watcher's own, or the caller of
 *       {@link #watch} or {@link Watch#liveness()}, rather than never.</li>
 *   <li>After {@link Watch#close()} returns, {@code onExit} will not start (it may already be
 *       running) and the watch holds no operating-system resource.</li>
 *   <li>Invalid pids (zero, negative, larger than the platform's pid range) are treated as
 *       processes that do not exist: never alive, no uid, a watch fires at once.</li>
 * </ul>
 */
public interface ProcessWatcher {

    /**
     * What a liveness check established. Only {@link #DEAD} is a proof: the process exited, or
     * the pid now belongs to a process with another start time. {@link #UNKNOWN} means the check
     * itself failed (no descriptor left, no memory, {@code /proc} unreadable, ...): it is never
     * taken for a death, because releasing a live host's lease would break fencing.
     */
    enum Liveness {
        /** The process is running and is the one that was identified (same start time). */
        ALIVE,
        /** Proven gone: exited (zombie included), or its pid belongs to another process now. */
        DEAD,
        /** The check could not be made; nothing may be released or let in on this answer. */
        UNKNOWN
    }

    /**
     * The start time of a live process.
     *
     * @param pid the process id
     * @return its start time, or empty when the process is proven absent: there is no such
     *     process, or it has exited (zombie)
     * @throws ProcessWatchException when the process cannot be inspected (descriptor or memory
     *     exhaustion, an unreadable {@code /proc}): whether it exists is unknown
     */
    OptionalLong startTime(long pid) throws ProcessWatchException;

    /**
     * Whether the process {@code pid} that started at {@code startTime} is still running.
     * {@link Liveness#DEAD} once it has exited or the pid is reused by another process;
     * {@link Liveness#UNKNOWN} when the check could not be made.
     */
    Liveness liveness(long pid, long startTime);

    /**
     * The real uid of a process, used to check that a pid declared by a TCP host belongs to
     * the helper's own user.
     *
     * <p>RACE: the answer is about whatever process holds the pid at the time of the call.
     * To bind it to a known process, read {@link #startTime} first, then the uid, then
     * confirm with {@link #liveness}{@code (pid, startTime)}: if the process was the same
     * before and after, the uid belongs to it.
     *
     * @return the real uid, or empty if there is no such process
     * @throws ProcessWatchException when the process cannot be inspected
     */
    OptionalLong realUid(long pid) throws ProcessWatchException;

    /**
     * Whether the process {@code pid} runs as the user of this process: its real uid equals ours
     * (POSIX), or its token's user SID equals ours (Windows, where a process has no uid and
     * {@link #realUid} may refuse). False when there is no such process.
     *
     * <p>The default compares {@link #realUid} of {@code pid} with that of this process.
     *
     * <p>RACE: as {@link #realUid}, about whatever process holds the pid at the time of the call;
     * bind it with {@link #startTime} before and {@link #liveness} after.
     *
     * @throws ProcessWatchException when either user cannot be read: unknown is never "same user"
     */
    default boolean isOwnUser(long pid) throws ProcessWatchException {
        OptionalLong mine = realUid(ProcessHandle.current().pid());
        if (mine.isEmpty()) {
            throw new ProcessWatchException("cannot read the helper's own uid");
        }
        OptionalLong theirs = realUid(pid);
        return theirs.isPresent() && theirs.getAsLong() == mine.getAsLong();
    }

    /**
     * The parent pid of a live process, or empty when there is no such process. Used to accept a
     * host that declares an ancestor of the connecting process (a shell running curl) as itself.
     *
     * @throws ProcessWatchException when the process cannot be inspected
     */
    OptionalLong parentPid(long pid) throws ProcessWatchException;

    /**
     * Whether exits are still noticed promptly. False once the watcher's own machinery failed
     * (its notification thread died): registered watches then stay registered and never fire on
     * their own (a failure is not a death), {@link Watch#liveness()} still answers, and new
     * watches are refused.
     */
    default boolean healthy() {
        return true;
    }

    /**
     * Watches a process until it exits.
     *
     * @param pid the process id
     * @param startTime its start time, as returned by {@link #startTime}
     * @param onExit called once, promptly, after the process is proven to have exited (see the
     *     class guarantees); never on an unknown
     * @return the watch; close it to cancel
     * @throws ProcessWatchException if the platform cannot watch the process here (no
     *     facility, no descriptor left, the watcher stopped, or the process's liveness could not
     *     be established): the watch is then not registered and {@code onExit} is never called
     */
    Watch watch(long pid, long startTime, Runnable onExit) throws ProcessWatchException;

    /** One registered watch. Closing it cancels it and releases its descriptor; idempotent. */
    interface Watch extends AutoCloseable {

        /** The watched pid. */
        long pid();

        /** The start time the watch was registered with. */
        long startTime();

        /**
         * Whether the watched process is still running, answered from what the watch already
         * holds (on Linux its pidfd: no new descriptor is needed, so the answer is sound even
         * when the helper has run out of descriptors). {@link Liveness#DEAD} once the watch has
         * fired; {@link Liveness#UNKNOWN} after {@link #close()} or when the check fails.
         */
        Liveness liveness();

        /** Cancels the watch: {@code onExit} will not start after this returns. Never throws. */
        @Override
        void close();
    }
}
