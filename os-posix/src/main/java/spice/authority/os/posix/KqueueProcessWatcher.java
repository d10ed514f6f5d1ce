package spice.authority.os.posix;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
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
 * The macOS {@link ProcessWatcher}: one kqueue, one {@code EVFILT_PROC}/{@code NOTE_EXIT}
 * knote per watched pid, and one daemon thread that blocks in {@code kevent(2)} without a
 * timeout. Nothing polls on a timer, and no wake-up descriptor is needed: a change made by
 * another thread takes effect in a kqueue while the poll thread waits on it.
 *
 * <p>Start times, uids and parent pids come from {@code proc_pidinfo(pid, PROC_PIDTBSDINFO)}:
 * the start time is {@code pbi_start_tvsec * 10^6 + pbi_start_tvusec}, fixed at fork. It needs
 * no descriptor, so liveness stays known when the helper has run out of them. The kernel answers
 * it only for processes of the same user (or to root): another user's process is
 * {@link Liveness#UNKNOWN} ({@code EPERM}), never alive and never dead, which is all a
 * per-user helper needs.
 *
 * <p><b>Guarantees.</b> Those of {@link ProcessWatcher}. In addition:
 * <ul>
 *   <li>A death is proven only by the kernel: {@code ESRCH} (registering the knote, or from
 *       {@code proc_pidinfo}: no such live process, zombies included), a process that is a
 *       zombie or flagged {@code PROC_FLAG_INEXIT}, or another start time at the pid. An exit
 *       event is never taken on trust: each is checked against the pid's current process
 *       first (see the RACE notes), so an event left over from a previous process at the
 *       same pid cannot fire the watch of its successor.</li>
 *   <li>Unknown is not dead: any other failure ({@code EPERM}, {@code ENOMEM}, {@code EMFILE}
 *       for the kqueue itself, a short {@code proc_pidinfo} answer) is {@link Liveness#UNKNOWN}
 *       or a {@link ProcessWatchException}; it never fires a watch.</li>
 *   <li>Watches of one pid share its knote (a kqueue holds one knote per ident and filter);
 *       the knote is deleted when the last of them is closed or fired. Every kqueue change is
 *       made under the lock, so the registry and the kernel agree.</li>
 *   <li>{@code onExit} runs on a two-thread daemon executor (on the proving thread only when
 *       that executor refuses it), never under the lock. If the poll thread dies, the watcher is no longer {@link #healthy()}
 *       and refuses new watches; registered watches stay, {@link Watch#liveness()} still answers
 *       from {@code proc_pidinfo} and fires on a proof.</li>
 * </ul>
 *
 * <p>NOT RUN HERE: this class has run only against the simulated kernel of the Linux tests
 * ({@code FakeDarwin}, {@code KqueueProcessWatcherTest}); {@code KqueueProcessWatcherMacTest}
 * runs it against the real kernel and has not run yet (no Mac in this project's CI so far).
 */
final class KqueueProcessWatcher implements ProcessWatcher {

    private static final System.Logger LOG = System.getLogger(KqueueProcessWatcher.class.getName());

    private static final int MAX_EVENTS = 64;
    /** What {@link #change} answers when the kernel gave no receipt it understands. */
    private static final int NO_RECEIPT = -1;

    private static final class Holder {
        static final KqueueProcessWatcher INSTANCE = new KqueueProcessWatcher(DarwinSyscalls.LIBC,
                PosixPlatform.current().orElseThrow());
    }

    private final DarwinSyscalls sys;
    private final DarwinLayout layout;
    private final int esrch;
    private final int enoent;

    private final Object lock = new Object();
    /** pid to the watches of its current knote. Guarded by {@link #lock}. */
    private final Map<Long, Entry> entries = new HashMap<>();
    /** The kqueue; -1 until the first watch. Guarded by {@link #lock}. */
    private int kq = -1;
    /** Set when the poll thread died. Guarded by {@link #lock}. */
    private boolean dead;
    private final ExecutorService callbacks;

    /** The watches of one pid: all identified the same process (one start time). */
    private static final class Entry {
        final long startTime;
        final List<KqWatch> watches = new ArrayList<>();
        /** Whether a knote is registered for the pid (false after a failed re-arm: see lost). */
        boolean armed;

        Entry(long startTime) {
            this.startTime = startTime;
        }
    }

    /** The one instance of this JVM (macOS). Creating it loads no native code. */
    static KqueueProcessWatcher instance() {
        return Holder.INSTANCE;
    }

    /**
     * @param sys the door to the kernel ({@link DarwinSyscalls#LIBC}, or a simulated kernel in tests)
     * @param platform a macOS platform table (its kqueue layout and errno values)
     * @throws IllegalStateException for a table without a kqueue layout
     */
    KqueueProcessWatcher(DarwinSyscalls sys, PosixPlatform platform) {
        this.sys = Objects.requireNonNull(sys, "sys");
        this.layout = DarwinLayout.of(platform);
        this.esrch = platform.ESRCH;
        this.enoent = platform.ENOENT;
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> Thread.ofPlatform().daemon().name("spice-process-exit-" + n.incrementAndGet()).unstarted(r));
        pool.allowCoreThreadTimeOut(true);
        callbacks = pool;
    }

    /** pid_t is an int; macOS pids are below 100000. */
    static boolean validPid(long pid) {
        return pid > 0 && pid <= Integer.MAX_VALUE;
    }

    // ---- inspection -------------------------------------------------------------------------

    /**
     * {@code proc_pidinfo(PROC_PIDTBSDINFO)} of {@code pid}: null when it proves there is no
     * such live process (ESRCH: none, or a zombie).
     *
     * @throws ProcessWatchException on any other failure, or an answer that is not the whole
     *     struct about this pid
     */
    private DarwinLayout.BsdInfo bsdinfo(long pid) throws ProcessWatchException {
        byte[] buf = new byte[layout.bsdinfoSize];
        int filled;
        try {
            filled = sys.proc_pidinfo((int) pid, layout.PROC_PIDTBSDINFO, 0, buf);
        } catch (PosixException e) {
            if (e.errno() == esrch) {
                return null;
            }
            throw new ProcessWatchException("cannot inspect process " + pid + ": " + e.getMessage());
        } catch (RuntimeException e) {
            throw new ProcessWatchException("cannot inspect process " + pid + ": " + e);
        }
        DarwinLayout.BsdInfo info = layout.decodeBsdInfo(buf, filled);
        if (info == null || info.pid() != pid || info.startTime() == DarwinLayout.MALFORMED) {
            throw new ProcessWatchException("proc_pidinfo of process " + pid + " answered " + filled
                    + " bytes that do not describe it");
        }
        return info;
    }

    /**
     * The liveness decision, given what {@code proc_pidinfo} answered. Pure: the Linux tests
     * run it on decoded structs and errnos.
     *
     * @param info the decoded answer, or null when the call failed
     * @param errno the call's errno when it failed (ignored otherwise)
     */
    static Liveness decide(DarwinLayout layout, int esrch, long pid, long startTime, DarwinLayout.BsdInfo info,
                           int errno) {
        if (!validPid(pid)) {
            return Liveness.DEAD;
        }
        if (info == null) {
            // SECURITY: only ESRCH proves absence; EPERM, ENOMEM, EMFILE... prove nothing.
            return errno == esrch ? Liveness.DEAD : Liveness.UNKNOWN;
        }
        if (info.pid() != pid || info.startTime() == DarwinLayout.MALFORMED) {
            return Liveness.UNKNOWN;
        }
        if (layout.exited(info) || info.startTime() != startTime) {
            return Liveness.DEAD;
        }
        return Liveness.ALIVE;
    }

    /** Whether the process {@code pid} that started at {@code startTime} runs now. Needs no descriptor. */
    private Liveness inspect(long pid, long startTime) {
        if (!validPid(pid)) {
            return Liveness.DEAD;
        }
        try {
            DarwinLayout.BsdInfo info = bsdinfo(pid);
            return decide(layout, esrch, pid, startTime, info, info == null ? esrch : 0);
        } catch (ProcessWatchException e) {
            return Liveness.UNKNOWN;
        }
    }

    @Override
    public OptionalLong startTime(long pid) throws ProcessWatchException {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        DarwinLayout.BsdInfo info = bsdinfo(pid);
        return info == null || layout.exited(info) ? OptionalLong.empty() : OptionalLong.of(info.startTime());
    }

    @Override
    public Liveness liveness(long pid, long startTime) {
        return inspect(pid, startTime);
    }

    /** {@inheritDoc} {@code pbi_ruid}. */
    @Override
    public OptionalLong realUid(long pid) throws ProcessWatchException {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        DarwinLayout.BsdInfo info = bsdinfo(pid);
        return info == null ? OptionalLong.empty() : OptionalLong.of(info.ruid());
    }

    /** {@inheritDoc} {@code pbi_ppid}; empty for a process on its way out, as for a zombie. */
    @Override
    public OptionalLong parentPid(long pid) throws ProcessWatchException {
        if (!validPid(pid)) {
            return OptionalLong.empty();
        }
        DarwinLayout.BsdInfo info = bsdinfo(pid);
        return info == null || layout.exited(info) ? OptionalLong.empty() : OptionalLong.of(info.ppid());
    }

    @Override
    public boolean healthy() {
        synchronized (lock) {
            return !dead;
        }
    }

    // ---- the kqueue -------------------------------------------------------------------------

    /**
     * Applies one {@code EVFILT_PROC}/{@code NOTE_EXIT} change for {@code pid} with
     * {@code EV_RECEIPT}, so that the kernel answers this change alone (and no pending event).
     *
     * @return the change's errno: 0 when applied, {@link #NO_RECEIPT} without a receipt
     * @throws PosixException when {@code kevent} itself failed
     */
    private int change(long pid, int flags) throws PosixException {
        assert Thread.holdsLock(lock);
        byte[] changes = new byte[layout.keventSize];
        layout.encode(layout.procExit(pid, flags | layout.EV_RECEIPT), changes, 0);
        byte[] receipt = new byte[layout.keventSize];
        int n = sys.kevent(kq, changes, 1, receipt, 1, 0);
        if (n != 1) {
            return NO_RECEIPT;
        }
        DarwinLayout.KEvent r = layout.decodeKevent(receipt, 0);
        if ((r.flags() & layout.EV_ERROR) == 0 || r.ident() != pid) {
            return NO_RECEIPT;
        }
        return r.data() >= 0 && r.data() <= Integer.MAX_VALUE ? (int) r.data() : NO_RECEIPT;
    }

    /** What {@link #arm} established, and whether a knote is registered for the pid afterwards. */
    private record Armed(Liveness liveness, boolean armed) {}

    /**
     * Registers (or re-registers) the knote of {@code pid}, then checks that the process it is
     * attached to is the one that started at {@code startTime}.
     *
     * <p>RACE: the pid may have changed hands between the caller's start time and the
     * registration, so the knote may be attached to another process. Reading the start time
     * again <em>after</em> the registration settles it: the identified process held the pid
     * before and holds it after, and a process never gets its pid back, so the knote is its
     * own. ESRCH from the registration proves the process gone (no process, or a zombie).
     */
    private Armed arm(long pid, long startTime) {
        assert Thread.holdsLock(lock);
        int err;
        try {
            err = change(pid, layout.EV_ADD | layout.EV_ONESHOT);
        } catch (PosixException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "process watcher: cannot register pid {0}: {1}", pid, e.getMessage());
            return new Armed(Liveness.UNKNOWN, false);
        }
        if (err == esrch) {
            return new Armed(Liveness.DEAD, false);
        }
        if (err != 0) {
            LOG.log(System.Logger.Level.WARNING, "process watcher: registering pid {0} answered errno {1}", pid, err);
            return new Armed(Liveness.UNKNOWN, false);
        }
        return new Armed(inspect(pid, startTime), true);
    }

    /** Deletes the knote of {@code pid}; a knote already consumed by its exit event is no error. */
    private void deleteKnote(long pid) {
        assert Thread.holdsLock(lock);
        try {
            int err = change(pid, layout.EV_DELETE);
            if (err != 0 && err != enoent && err != esrch) {
                LOG.log(System.Logger.Level.WARNING, "process watcher: deleting the knote of pid {0} answered errno {1}",
                        pid, err);
            }
        } catch (PosixException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "process watcher: cannot delete the knote of pid {0}: {1}", pid,
                    e.getMessage());
        }
    }

    private void ensureStarted() throws ProcessWatchException {
        assert Thread.holdsLock(lock);
        if (dead) {
            throw new ProcessWatchException("the process watcher stopped after an internal error; restart the helper");
        }
        if (kq >= 0) {
            return;
        }
        int fd;
        try {
            fd = sys.kqueue();
        } catch (PosixException e) {
            throw new ProcessWatchException("cannot create the kqueue of the process watcher: " + e.getMessage());
        }
        try {
            Thread.ofPlatform().daemon().name("spice-process-watch").start(() -> pollLoop(fd));
        } catch (RuntimeException | Error e) {
            closeQuietly(fd);
            throw e;
        }
        // Published only once the thread runs: a watcher without its thread would notice no exit.
        kq = fd;
    }

    @Override
    public Watch watch(long pid, long startTime, Runnable onExit) throws ProcessWatchException {
        KqWatch w = new KqWatch(pid, startTime, Objects.requireNonNull(onExit, "onExit"));
        if (!validPid(pid)) {
            w.fire();
            return w;
        }
        List<KqWatch> proven = new ArrayList<>();
        try {
            synchronized (lock) {
                ensureStarted();
                Entry e = entries.get(pid);
                if (e != null && e.startTime != startTime) {
                    switch (inspect(pid, startTime)) {
                        case DEAD -> {
                            proven.add(w);
                            return w;
                        }
                        case UNKNOWN -> throw new ProcessWatchException(
                                "cannot watch process " + pid + ": its state cannot be read");
                        case ALIVE -> {
                            // SECURITY: another start time now holds the pid, which proves the
                            // entry's process gone. Its knote may be a stale one still queued for
                            // that exit: delete it, so the new registration attaches to this process.
                            entries.remove(pid);
                            proven.addAll(e.watches);
                            e.watches.clear();
                            deleteKnote(pid);
                            e = null;
                        }
                    }
                }
                if (e != null && e.armed) {
                    // The knote exists (or its exit event is queued): it covers this watch too.
                    // A check that needs no descriptor says whether the process is already gone.
                    Liveness now = inspect(pid, startTime);
                    if (now == Liveness.UNKNOWN) {
                        throw new ProcessWatchException("cannot watch process " + pid + ": its state cannot be read");
                    }
                    if (now == Liveness.DEAD) {
                        // the entry identified the same process: its watches are proven too
                        entries.remove(pid);
                        proven.addAll(e.watches);
                        e.watches.clear();
                        deleteKnote(pid);
                        proven.add(w);
                        return w;
                    }
                    e.watches.add(w);
                    w.entry = e;
                    return w;
                }
                Armed a = arm(pid, startTime);
                switch (a.liveness()) {
                    case DEAD -> {
                        if (e != null) {
                            entries.remove(pid);
                            proven.addAll(e.watches);
                            e.watches.clear();
                        }
                        if (a.armed()) {
                            deleteKnote(pid);
                        }
                        proven.add(w);
                        return w;
                    }
                    case UNKNOWN -> {
                        if (e != null) {
                            e.armed = a.armed(); // the entry's own watches keep the knote, if any
                        } else if (a.armed()) {
                            deleteKnote(pid);
                        }
                        throw new ProcessWatchException("cannot watch process " + pid + ": its state cannot be read");
                    }
                    case ALIVE -> {
                        if (e == null) {
                            e = new Entry(startTime);
                            entries.put(pid, e);
                        }
                        e.armed = true;
                        e.watches.add(w);
                        w.entry = e;
                        return w;
                    }
                    default -> throw new AssertionError(a);
                }
            }
        } finally {
            proven.forEach(KqWatch::fire);
        }
    }

    /** Number of pids with a registry entry, for tests. */
    int registeredPids() {
        synchronized (lock) {
            return entries.size();
        }
    }

    // ---- the poll thread --------------------------------------------------------------------

    private void pollLoop(int kqueue) {
        try {
            pollUntilFailure(kqueue);
        } catch (Throwable t) {
            // SECURITY: unknown is not dead. A watcher failure proves nothing about the hosts:
            // firing would release the leases of live hosts (two owners of one run). The watches
            // stay registered, Watch.liveness() still answers from proc_pidinfo (and fires on a
            // proven exit), new watches are refused and healthy() turns false.
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

    private void pollUntilFailure(int kqueue) throws InterruptedException {
        byte[] events = new byte[MAX_EVENTS * layout.keventSize];
        byte[] none = new byte[0];
        while (true) {
            int n;
            try {
                n = sys.kevent(kqueue, none, 0, events, MAX_EVENTS, -1);
            } catch (PosixException | RuntimeException | OutOfMemoryError e) {
                // SECURITY: unknown is not dead: nothing fires; wait again after a pause (a
                // transient lack of memory must not end the watcher for good either).
                LOG.log(System.Logger.Level.ERROR,
                        "process watcher: kevent failed ({0}); retrying, no watch fires on a failure", e.toString());
                Thread.sleep(100); // a persistent failure must not spin
                continue;
            }
            for (int i = 0; i < n; i++) {
                DarwinLayout.KEvent ev = layout.decodeKevent(events, i);
                if (ev.filter() == layout.EVFILT_PROC) {
                    onEvent(ev);
                }
            }
        }
    }

    /**
     * An {@code EVFILT_PROC} event for a pid: its exit, as far as the knote knows.
     *
     * <p>RACE: the event is not taken on trust. It may be left over from the previous process at
     * this pid (that process exited, the pid was reused and a watch of the new process was
     * registered before this thread read the event), so the pid's current process is checked
     * first: proven gone fires the entry; the same process, alive and not in exit, means a
     * stale event, and the knote is registered again; an unreadable state is no proof either
     * way, so the knote is registered again too, and {@code ESRCH} there proves the exit.
     */
    private void onEvent(DarwinLayout.KEvent ev) {
        long pid = ev.ident();
        List<KqWatch> proven = new ArrayList<>();
        synchronized (lock) {
            Entry e = entries.get(pid);
            if (e == null) {
                return; // closed meanwhile, or fired already
            }
            Liveness now = inspect(pid, e.startTime);
            boolean armed = false;
            if (now != Liveness.DEAD) {
                // the knote was consumed by this event (EV_ONESHOT): register it again
                Armed a = arm(pid, e.startTime);
                now = a.liveness();
                armed = a.armed();
            }
            if (now == Liveness.DEAD) {
                entries.remove(pid);
                proven.addAll(e.watches);
                e.watches.clear();
                if (armed) {
                    deleteKnote(pid);
                }
            } else {
                e.armed = armed;
                if (!armed) {
                    LOG.log(System.Logger.Level.ERROR,
                            "process watcher: pid {0} cannot be registered again; its watches answer liveness() but fire only when asked",
                            pid);
                }
            }
        }
        proven.forEach(KqWatch::fire);
    }

    /** Removes {@code w} from its entry; deletes the knote when it was the last. Lock held. */
    private void detach(KqWatch w) {
        assert Thread.holdsLock(lock);
        Entry e = w.entry;
        w.entry = null;
        if (e == null || !e.watches.remove(w)) {
            return;
        }
        if (e.watches.isEmpty() && entries.get(w.pid) == e) {
            entries.remove(w.pid);
            if (e.armed) {
                deleteKnote(w.pid);
            }
        }
    }

    private void closeQuietly(int fd) {
        try {
            sys.close(fd);
        } catch (PosixException e) {
            LOG.log(System.Logger.Level.WARNING, "process watcher: close failed: {0}", e.getMessage());
        }
    }

    private final class KqWatch implements Watch {
        private final long pid;
        private final long startTime;
        private final ExitOnce outcome;
        /** The entry while registered, else null. Guarded by {@link #lock}. */
        private Entry entry;

        KqWatch(long pid, long startTime, Runnable onExit) {
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

        /** {@inheritDoc} From {@code proc_pidinfo}: needs no descriptor. */
        @Override
        public Liveness liveness() {
            Liveness settled = outcome.settled();
            if (settled != null) {
                return settled;
            }
            Liveness now = inspect(pid, startTime);
            if (now == Liveness.DEAD) {
                synchronized (lock) {
                    detach(this);
                }
                fire();
            }
            return now;
        }

        @Override
        public void close() {
            outcome.close();
            synchronized (lock) {
                detach(this);
            }
        }

        @Override
        public String toString() {
            return "Watch[pid=" + pid + ", startTime=" + startTime + "]";
        }
    }
}
