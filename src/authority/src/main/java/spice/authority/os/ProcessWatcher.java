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
 *       the pid is never taken for the old one: {@link #isAlive} and {@link #watch} compare
 *       the start time. A zombie (exited, not yet reaped) counts as exited.</li>
 *   <li>Each {@link #watch} calls its {@code onExit} at most once, and exactly once unless the
 *       watch is closed first. It is called within milliseconds of the exit (the kernel
 *       notifies; nothing polls on a timer), or at once when the process is already gone or
 *       the pid now belongs to a process with another start time.</li>
 *   <li>{@code onExit} never runs on the caller's thread and never while a lock of the
 *       watcher is held; it runs on a small daemon executor shared by all watches, so it may
 *       block briefly but should not block for long.</li>
 *   <li>After {@link Watch#close()} returns, {@code onExit} will not start (it may already be
 *       running) and the watch holds no operating-system resource.</li>
 *   <li>Invalid pids (zero, negative, larger than the platform's pid range) are treated as
 *       processes that do not exist: never alive, no uid, a watch fires at once.</li>
 * </ul>
 */
public interface ProcessWatcher {

    /**
     * The start time of a live process.
     *
     * @param pid the process id
     * @return its start time, or empty if there is no such process, it has exited (zombie),
     *     or it cannot be inspected
     */
    OptionalLong startTime(long pid);

    /**
     * Whether the process {@code pid} exists, has not exited, and started at {@code startTime}.
     * False once the pid is reused by another process.
     */
    boolean isAlive(long pid, long startTime);

    /**
     * The real uid of a process, used to check that a pid declared by a TCP host belongs to
     * the helper's own user.
     *
     * <p>RACE: the answer is about whatever process holds the pid at the time of the call.
     * To bind it to a known process, read {@link #startTime} first, then the uid, then
     * confirm with {@link #isAlive}{@code (pid, startTime)}: if the process was the same
     * before and after, the uid belongs to it.
     *
     * @return the real uid, or empty if there is no such process or it cannot be inspected
     */
    OptionalLong realUid(long pid);

    /**
     * The parent pid of a live process, or empty when there is no such process. Used to accept a
     * host that declares an ancestor of the connecting process (a shell running curl) as itself.
     */
    OptionalLong parentPid(long pid);

    /**
     * Watches a process until it exits.
     *
     * @param pid the process id
     * @param startTime its start time, as returned by {@link #startTime}
     * @param onExit called once, promptly, after the process exits (see the class guarantees)
     * @return the watch; close it to cancel
     * @throws ProcessWatchException if the platform cannot watch processes here (the watch is
     *     then not registered and {@code onExit} is never called)
     */
    Watch watch(long pid, long startTime, Runnable onExit) throws ProcessWatchException;

    /** One registered watch. Closing it cancels it and releases its descriptor; idempotent. */
    interface Watch extends AutoCloseable {

        /** The watched pid. */
        long pid();

        /** The start time the watch was registered with. */
        long startTime();

        /** Cancels the watch: {@code onExit} will not start after this returns. Never throws. */
        @Override
        void close();
    }
}
