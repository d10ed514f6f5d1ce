package spice.authority.os.posix;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;

/**
 * The Linux {@link ProcessWatcher}: one pidfd per watch (Linux 5.3+), and one daemon thread
 * that blocks in {@code poll(2)} on every pidfd plus an eventfd used to wake it when a watch
 * is added or closed. Nothing polls on a timer.
 *
 * <p>Start times and uids come from {@code /proc} ({@link ProcFs}).
 *
 * <p><b>Guarantees.</b> Those of {@link ProcessWatcher}. In addition: each pidfd is closed
 * exactly once, by whichever of {@link Watch#close()} and the poll thread removes its watch
 * from the registry first (under the lock); {@code onExit} runs on a two-thread daemon
 * executor (on the proving thread only when that executor refuses it), never under the lock.
 *
 * <p>Unknown is not dead: a watch fires only on a proof (its pidfd became readable, the pid
 * has no process, or it has another start time). If {@code poll} fails, the loop waits and
 * polls again; if the poll thread dies, the watcher is no longer {@link #healthy()} and refuses
 * new watches, but every registered watch stays registered with its pidfd, so
 * {@link Watch#liveness()} still answers from the kernel and a proven exit still fires there.
 * A lease is never released because the helper failed.
 */
final class PidfdProcessWatcher implements ProcessWatcher {

    private static final System.Logger LOG = System.getLogger(PidfdProcessWatcher.class.getName());

    /** revents of a pidfd whose process exited: readable (and, once reaped, hung up). */
    private static final short EXITED = (short) (Libc.P.POLLIN | Libc.P.POLLHUP);

    private static final class Holder {
        static final PidfdProcessWatcher INSTANCE = new PidfdProcessWatcher();
    }

    private final Object lock = new Object();
    /** pidfd to its watch. Guarded by {@link #lock}. */
    private final Map<Integer, PidfdWatch> registered = new HashMap<>();
    /** The eventfd that wakes the poll thread; -1 until the first watch. Guarded by {@link #lock}. */
    private int wakeFd = -1;
    /** Set when the poll thread died: exits can no longer be noticed, so watch() refuses. Guarded by {@link #lock}. */
    private boolean dead;
    private final ExecutorService callbacks;
    /** Run by the poll thread at the top of every iteration; a no-op except in tests. */
    private final Runnable pollHook;

    /** The one instance of this JVM. Creating it loads no native code. */
    static PidfdProcessWatcher instance() {
        return Holder.INSTANCE;
    }

    PidfdProcessWatcher() {
        this(() -> {});
    }

    /**
     * For tests: {@code pollHook} runs on the poll thread before each {@code poll}, so a test
     * can make the thread die (by throwing an {@link Error}) at a moment it chooses.
     */
    PidfdProcessWatcher(Runnable pollHook) {
        this.pollHook = Objects.requireNonNull(pollHook, "pollHook");
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> Thread.ofPlatform().daemon().name("spice-process-exit-" + n.incrementAndGet()).unstarted(r));
        pool.allowCoreThreadTimeOut(true);
        callbacks = pool;
    }

    @Override
    public OptionalLong startTime(long pid) throws ProcessWatchException {
        return ProcFs.startTime(pid);
    }

    /**
     * {@inheritDoc}
     *
     * <p>SECURITY: a death is proven only by the kernel's process handle: {@code pidfd_open}
     * answers ESRCH (no such process), or the pidfd is readable (the whole thread group exited).
     * {@code /proc} is read only to tell whether the live process now at the pid is the one
     * identified (its start time): another start time proves the identified one gone. {@code /proc}
     * alone never proves a death: a thread-group leader that exited while its other threads run
     * reads as a zombie, and {@code hidepid} hides live processes.
     */
    @Override
    public Liveness liveness(long pid, long startTime) {
        if (!ProcFs.validPid(pid)) {
            return Liveness.DEAD;
        }
        int fd;
        try {
            fd = Libc.pidfd_open((int) pid, 0);
        } catch (PosixException e) {
            return e.errno() == Libc.P.ESRCH ? Liveness.DEAD : Liveness.UNKNOWN;
        } catch (RuntimeException e) {
            return Liveness.UNKNOWN;
        }
        try {
            Liveness now = pollOnce(fd);
            if (now != Liveness.ALIVE) {
                return now;
            }
            return ProcFs.startTimeInAnyState(pid) == startTime ? Liveness.ALIVE : Liveness.DEAD;
        } catch (ProcessWatchException | RuntimeException e) {
            return Liveness.UNKNOWN;
        } finally {
            closeQuietly(fd);
        }
    }

    /** A pidfd's state without blocking: readable is a proven exit; a failure or an odd event is unknown. */
    private static Liveness pollOnce(int fd) {
        short[] revents = new short[1];
        try {
            Libc.poll(new int[] {fd}, new short[] {(short) Libc.P.POLLIN}, revents, 0);
        } catch (PosixException | RuntimeException e) {
            return Liveness.UNKNOWN;
        }
        if ((revents[0] & EXITED) != 0) {
            return Liveness.DEAD;
        }
        return revents[0] == 0 ? Liveness.ALIVE : Liveness.UNKNOWN;
    }

    @Override
    public OptionalLong parentPid(long pid) throws ProcessWatchException {
        return ProcFs.parentPid(pid);
    }

    @Override
    public OptionalLong realUid(long pid) throws ProcessWatchException {
        return ProcFs.realUid(pid);
    }

    @Override
    public boolean healthy() {
        synchronized (lock) {
            return !dead;
        }
    }

    @Override
    public Watch watch(long pid, long startTime, Runnable onExit) throws ProcessWatchException {
        PidfdWatch w = new PidfdWatch(pid, startTime, Objects.requireNonNull(onExit, "onExit"));
        if (!ProcFs.validPid(pid)) {
            w.fire();
            return w;
        }
        int fd;
        try {
            fd = Libc.pidfd_open((int) pid, 0);
        } catch (PosixException e) {
            if (e.errno() == Libc.P.ESRCH) {
                w.fire();
                return w;
            }
            throw new ProcessWatchException("cannot watch process " + pid + ": " + e.getMessage());
        }
        // RACE: the pid may have been reused between the caller's startTime() and pidfd_open,
        // so the pidfd may name another process. Reading the start time again *after* the open
        // settles it: the original process held the pid before the open and holds it now, and
        // a process never gets its pid back, so the pidfd names it. A mismatch (or exit) fires;
        // a check that cannot be made registers nothing (unknown is not dead, nor alive).
        Liveness now;
        try {
            now = pollOnce(fd);
            if (now == Liveness.ALIVE) {
                now = ProcFs.startTimeInAnyState(pid) == startTime ? Liveness.ALIVE : Liveness.DEAD;
            }
        } catch (ProcessWatchException | RuntimeException e) {
            now = Liveness.UNKNOWN;
        } catch (Error e) {
            closeQuietly(fd);
            throw e;
        }
        switch (now) {
            case DEAD -> {
                closeQuietly(fd);
                w.fire();
                return w;
            }
            case UNKNOWN -> {
                closeQuietly(fd);
                throw new ProcessWatchException("cannot watch process " + pid + ": its state cannot be read");
            }
            case ALIVE -> { }
        }
        synchronized (lock) {
            try {
                ensureStarted();
            } catch (PosixException | ProcessWatchException | RuntimeException e) {
                closeQuietly(fd);
                throw e instanceof ProcessWatchException pwe ? pwe
                        : new ProcessWatchException("cannot start the process watcher: " + e.getMessage());
            } catch (Error e) {
                closeQuietly(fd); // e.g. no memory for the poll thread: the pidfd must not leak either
                throw e;
            }
            w.fd = fd;
            try {
                registered.put(fd, w);
            } catch (RuntimeException | Error e) {
                registered.remove(fd, w); // a HashMap may fail growing after the entry went in
                w.fd = -1;
                closeQuietly(fd); // e.g. no memory for the map's entry: the pidfd must not leak
                throw e;
            }
        }
        try {
            wake();
        } catch (RuntimeException | Error e) {
            // The caller gets no watch: take this one back, or its pidfd would stay registered
            // and fire for a session that was never opened.
            try {
                w.close();
            } catch (RuntimeException | Error again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        return w;
    }

    /** Number of registered watches, for tests. */
    int registeredCount() {
        synchronized (lock) {
            return registered.size();
        }
    }

    private void ensureStarted() throws PosixException, ProcessWatchException {
        assert Thread.holdsLock(lock);
        if (dead) {
            throw new ProcessWatchException("the process watcher stopped after an internal error; restart the helper");
        }
        if (wakeFd >= 0) {
            return;
        }
        int fd = Libc.eventfd(0, Libc.P.EFD_CLOEXEC | Libc.P.EFD_NONBLOCK);
        try {
            Thread.ofPlatform().daemon().name("spice-process-watch").start(() -> pollLoop(fd));
        } catch (RuntimeException | Error e) {
            closeQuietly(fd);
            throw e;
        }
        // Published only once the thread runs: a watcher without its thread would notice no exit.
        wakeFd = fd;
    }

    private void wake() {
        int fd;
        synchronized (lock) {
            fd = wakeFd;
        }
        try {
            Libc.write(fd, new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, 0, 8);
        } catch (PosixException e) {
            // EAGAIN: the counter is saturated, so a wake-up is pending anyway
            if (e.errno() != Libc.P.EAGAIN) {
                LOG.log(System.Logger.Level.ERROR, "process watcher: cannot wake the poll thread: {0}", e.getMessage());
            }
        }
    }

    private void pollLoop(int wake) {
        try {
            pollUntilFailure(wake);
        } catch (Throwable t) {
            // SECURITY: unknown is not dead. No exit is noticed promptly from now on, but a
            // watcher failure proves nothing about the hosts: firing would release the leases
            // of live hosts (two owners of one run). The watches stay registered with their
            // pidfds, Watch.liveness() still answers from the kernel (and fires on a proven
            // exit), new watches are refused and healthy() turns false.
            synchronized (lock) {
                dead = true;
            }
            LOG.log(System.Logger.Level.ERROR,
                    "process watcher stopped ({0}); exits are no longer noticed promptly, sessions stay until proven dead; restart the helper",
                    t.toString());
            if (t instanceof Error e) {
                throw e;
            }
        }
    }

    private void pollUntilFailure(int wake) throws InterruptedException {
        short in = (short) Libc.P.POLLIN;
        while (true) {
            pollHook.run();
            PidfdWatch[] ws;
            int[] fds;
            synchronized (lock) {
                ws = registered.values().stream().filter(w -> !w.lost).toArray(PidfdWatch[]::new);
                fds = new int[ws.length + 1];
                fds[0] = wake;
                for (int i = 0; i < ws.length; i++) {
                    fds[i + 1] = ws[i].fd;
                }
            }
            short[] events = new short[fds.length];
            java.util.Arrays.fill(events, in);
            short[] revents = new short[fds.length];
            try {
                // RACE: a watch closed after the snapshot has its fd closed (and the number
                // perhaps reused) while we poll it; close() then wakes us, and exited() ignores
                // any entry whose fd no longer maps to the same watch.
                Libc.poll(fds, events, revents, -1);
                if (revents[0] != 0) {
                    drain(wake);
                }
                for (int i = 1; i < fds.length; i++) {
                    if ((revents[i] & EXITED) != 0) {
                        exited(ws[i - 1], fds[i]);
                    } else if (revents[i] != 0) {
                        lost(ws[i - 1], fds[i], revents[i]);
                    }
                }
            } catch (PosixException | RuntimeException | OutOfMemoryError e) {
                // SECURITY: unknown is not dead: nothing fires; poll again after a pause (a
                // transient lack of native memory must not end the watcher for good either).
                LOG.log(System.Logger.Level.ERROR,
                        "process watcher: poll failed ({0}); retrying, no watch fires on a failure", e.toString());
                Thread.sleep(100); // a persistent failure must not spin
            }
        }
    }

    private static void drain(int wake) {
        try {
            Libc.read(wake, new byte[8], 0, 8);
        } catch (PosixException e) {
            // EAGAIN: already drained
        }
    }

    private void exited(PidfdWatch w, int fd) {
        synchronized (lock) {
            if (!registered.remove(fd, w)) {
                return; // closed meanwhile
            }
            w.fd = -1;
            closeQuietly(fd);
        }
        w.fire();
    }

    /**
     * A pidfd reported something other than an exit (POLLERR, POLLNVAL: it should not). That is
     * no proof of death: the watch leaves the poll set (so the loop does not spin on it) but keeps
     * its descriptor, and {@link Watch#liveness()} keeps answering (from a fresh pidfd when its own
     * cannot), firing it on a proof.
     */
    private void lost(PidfdWatch w, int fd, short revents) {
        synchronized (lock) {
            if (registered.get(fd) != w) {
                return; // closed meanwhile
            }
            w.lost = true;
        }
        LOG.log(System.Logger.Level.ERROR, "process watcher: pidfd of pid {0} reported 0x{1}; watching it by /proc from now on",
                w.pid, Integer.toHexString(revents & 0xFFFF));
    }

    private static void closeQuietly(int fd) {
        try {
            Libc.close(fd);
        } catch (PosixException e) {
            LOG.log(System.Logger.Level.WARNING, "process watcher: close failed: {0}", e.getMessage());
        }
    }

    private final class PidfdWatch implements Watch {
        private final long pid;
        private final long startTime;
        private final ExitOnce outcome;
        /** The pidfd while registered, else -1. Guarded by {@link #lock}. */
        private int fd = -1;
        /** Left out of the poll set after an odd event (see lost()). Guarded by {@link #lock}. */
        private boolean lost;

        PidfdWatch(long pid, long startTime, Runnable onExit) {
            this.pid = pid;
            this.startTime = startTime;
            this.outcome = new ExitOnce(pid, onExit, callbacks);
        }

        @Override
        public long pid() {
            return pid;
        }

        @Override
        public long startTime() {
            return startTime;
        }

        void fire() {
            outcome.fire();
        }

        @Override
        public Liveness liveness() {
            Liveness settled = outcome.settled();
            if (settled != null) {
                return settled;
            }
            int fd;
            Liveness answer;
            synchronized (lock) {
                fd = this.fd;
                // Under the lock: the poll thread cannot close this pidfd while it is polled here.
                answer = fd >= 0 ? pollOnce(fd) : Liveness.UNKNOWN;
            }
            if (answer == Liveness.UNKNOWN) {
                // Its own pidfd cannot tell: ask the kernel afresh (needs a descriptor).
                answer = PidfdProcessWatcher.this.liveness(pid, startTime);
            }
            if (answer == Liveness.DEAD) {
                if (fd >= 0) {
                    exited(this, fd);
                } else {
                    fire();
                }
            }
            return answer;
        }

        @Override
        public void close() {
            outcome.close();
            boolean released = false;
            synchronized (lock) {
                if (fd >= 0 && registered.remove(fd, this)) {
                    closeQuietly(fd);
                    fd = -1;
                    released = true;
                }
            }
            if (released) {
                wake();
            }
        }

        @Override
        public String toString() {
            return "Watch[pid=" + pid + ", startTime=" + startTime + "]";
        }
    }
}
