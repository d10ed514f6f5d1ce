package spice.authority.os.windows;

import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;

/**
 * The Windows {@link ProcessWatcher}: a process is named by its pid and its creation time
 * ({@code GetProcessTimes}, 100 ns ticks since 1601), so a reused pid is never taken for the old
 * process. A watch holds an {@code OpenProcess(SYNCHRONIZE)} handle, which stays valid after the
 * exit and is signalled by it; a daemon thread per watch waits on that handle and a cancel event
 * ({@code WaitForMultipleObjects}), and {@code onExit} runs on a shared daemon executor.
 *
 * <p>Unknown is not dead: a failed {@code OpenProcess} other than "no such process"
 * ({@code ERROR_INVALID_PARAMETER}), for example access denied to another user's process, is
 * {@link ProcessWatcher.Liveness#UNKNOWN} or a {@link ProcessWatchException}.
 *
 * <p>{@link #realUid} throws: a Windows process has a user SID, not a uid. {@link #isOwnUser}
 * compares the user SID of the process's token with this process's ({@link ProcessUsers}).
 *
 * <p>NOT RUN: never ran on Windows (README.md).
 */
final class WindowsProcessWatcher implements ProcessWatcher {

    private static final class Holder {
        static final WindowsProcessWatcher INSTANCE = new WindowsProcessWatcher(WindowsCalls.jna());
    }

    private final WindowsCalls calls;
    private final ExecutorService callbacks = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "spice-process-exit");
        t.setDaemon(true);
        return t;
    });

    WindowsProcessWatcher(WindowsCalls calls) {
        this.calls = calls;
    }

    static WindowsProcessWatcher instance() {
        return Holder.INSTANCE;
    }

    private static boolean validPid(long pid) {
        return pid > 0 && pid <= 0xFFFF_FFFFL;
    }

    @Override
    public OptionalLong startTime(long pid) throws ProcessWatchException {
        return ofLiveProcess(pid, calls::processCreationTime);
    }

    /** One value read through a handle of a running process. */
    @FunctionalInterface
    private interface HandleRead {
        long read(long process) throws WindowsException;
    }

    /**
     * {@code read} of process {@code pid} through one handle, or empty when there is no such
     * running process (an invalid pid, none, or one that has exited: its object lives on only
     * through handles). The handle is closed on every path.
     */
    private OptionalLong ofLiveProcess(long pid, HandleRead read) throws ProcessWatchException {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        try {
            long h = calls.openProcess((int) pid);
            if (h == 0) {
                return OptionalLong.empty();
            }
            try {
                if (calls.waitForAny(new long[] {h}, 0) == 0) {
                    return OptionalLong.empty();
                }
                return OptionalLong.of(read.read(h));
            } finally {
                calls.closeHandle(h);
            }
        } catch (WindowsException e) {
            throw new ProcessWatchException("cannot inspect process " + pid + ": " + e.getMessage());
        }
    }

    @Override
    public Liveness liveness(long pid, long startTime) {
        try {
            OptionalLong now = startTime(pid);
            return now.isPresent() && now.getAsLong() == startTime ? Liveness.ALIVE : Liveness.DEAD;
        } catch (ProcessWatchException e) {
            return Liveness.UNKNOWN;
        }
    }

    @Override
    public OptionalLong realUid(long pid) throws ProcessWatchException {
        throw new ProcessWatchException("a Windows process has a user SID, not a uid: use isOwnUser");
    }

    @Override
    public boolean isOwnUser(long pid) throws ProcessWatchException {
        try {
            // SECURITY: unknown is never "same user" (ProcessUsers throws); gone is not ours.
            return users().owner(pid) == ProcessUsers.Owner.SAME;
        } catch (ProcessUsers.UnknownOwnerException e) {
            throw new ProcessWatchException(e.getMessage());
        }
    }

    /**
     * The helper's own user, read on first use (a failure is not remembered: the next call reads
     * again). RACE: two first callers may both read the SID; the values are equal and either write
     * wins, so no lock is needed.
     */
    private volatile ProcessUsers users;

    private ProcessUsers users() throws ProcessWatchException {
        ProcessUsers u = users;
        if (u == null) {
            try {
                u = new ProcessUsers(calls, Sid.fromBinary(calls.currentUserSid()));
            } catch (WindowsException | MalformedDescriptorException e) {
                throw new ProcessWatchException("cannot read the helper's own user SID: " + e.getMessage());
            }
            users = u;
        }
        return u;
    }

    @Override
    public OptionalLong parentPid(long pid) throws ProcessWatchException {
        return ofLiveProcess(pid, calls::parentProcessId);
    }

    @Override
    public Watch watch(long pid, long startTime, Runnable onExit) throws ProcessWatchException {
        if (!validPid(pid)) {
            return firedAtOnce(pid, startTime, onExit);
        }
        long h;
        try {
            h = calls.openProcess((int) pid);
        } catch (WindowsException e) {
            throw new ProcessWatchException("cannot watch process " + pid + ": " + e.getMessage());
        }
        if (h == 0) {
            return firedAtOnce(pid, startTime, onExit); // proven absent
        }
        long event = 0;
        boolean ok = false;
        try {
            // SECURITY: the handle pins the process object; its creation time proves it is the one meant.
            if (calls.processCreationTime(h) != startTime) {
                return firedAtOnce(pid, startTime, onExit);
            }
            event = calls.createEvent();
            HandleWatch w = new HandleWatch(pid, startTime, h, event, onExit);
            Thread t = new Thread(w::run, "spice-process-watch-" + pid);
            t.setDaemon(true);
            t.start();
            ok = true;
            return w;
        } catch (WindowsException e) {
            throw new ProcessWatchException("cannot watch process " + pid + ": " + e.getMessage());
        } finally {
            if (!ok) {
                calls.closeHandle(h);
                if (event != 0) {
                    calls.closeHandle(event);
                }
            }
        }
    }

    private Watch firedAtOnce(long pid, long startTime, Runnable onExit) {
        callbacks.execute(onExit);
        return new Watch() {
            @Override public long pid() { return pid; }
            @Override public long startTime() { return startTime; }
            @Override public Liveness liveness() { return Liveness.DEAD; }
            @Override public void close() {}
        };
    }

    private final class HandleWatch implements Watch {
        private static final int OPEN = 0;
        private static final int FIRED = 1;
        private static final int CLOSED = 2;

        private final long pid;
        private final long startTime;
        private final long process;
        private final long cancel;
        private final Runnable onExit;
        private final AtomicInteger state = new AtomicInteger(OPEN);
        private boolean handlesClosed; // guarded by this

        HandleWatch(long pid, long startTime, long process, long cancel, Runnable onExit) {
            this.pid = pid;
            this.startTime = startTime;
            this.process = process;
            this.cancel = cancel;
            this.onExit = onExit;
        }

        void run() {
            try {
                int which = calls.waitForAny(new long[] {process, cancel}, -1);
                if (which == 0 && state.compareAndSet(OPEN, FIRED)) {
                    callbacks.execute(onExit);
                }
            } catch (WindowsException e) {
                // Unknown is not dead: the watch stays registered and never fires on its own.
                return;
            } finally {
                if (state.get() != OPEN) {
                    closeHandles();
                }
            }
        }

        private synchronized void closeHandles() {
            if (!handlesClosed) {
                handlesClosed = true;
                calls.closeHandle(process);
                calls.closeHandle(cancel);
            }
        }

        @Override
        public long pid() {
            return pid;
        }

        @Override
        public long startTime() {
            return startTime;
        }

        @Override
        public synchronized Liveness liveness() {
            int s = state.get();
            if (s == FIRED) {
                return Liveness.DEAD;
            }
            if (s == CLOSED || handlesClosed) {
                return Liveness.UNKNOWN;
            }
            try {
                return calls.waitForAny(new long[] {process}, 0) == 0 ? Liveness.DEAD : Liveness.ALIVE;
            } catch (WindowsException e) {
                return Liveness.UNKNOWN;
            }
        }

        @Override
        public void close() {
            if (state.compareAndSet(OPEN, CLOSED)) {
                try {
                    calls.setEvent(cancel); // the waiting thread wakes and closes the handles
                } catch (WindowsException e) {
                    closeHandles(); // RACE: the waiter then fails on closed handles and returns
                }
            }
        }
    }
}
