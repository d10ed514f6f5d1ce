package spice.authority.os.posix;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A simulated macOS kernel behind {@link DarwinSyscalls}, so that {@link KqueueProcessWatcher} and
 * {@link DarwinPeer} run on Linux: processes with start times, one kqueue whose
 * {@code EVFILT_PROC} knotes are attached to a process (not to a pid) and queue an exit event
 * when it exits, {@code proc_pidinfo(PROC_PIDTBSDINFO)} answered in the documented byte layout
 * (literal offsets, independent of {@link DarwinLayout}), and chosen calls failing with chosen
 * errnos. It follows the kernel where the watcher depends on it: a zombie gives ESRCH both to
 * {@code proc_pidinfo} (arg 0) and to registering a knote; {@code EV_ADD} on an existing knote
 * keeps its attachment; an exit event is queued once and its knote removed ({@code EV_ONESHOT}).
 *
 * <p>It models only this; that the real kernel behaves so is what the macOS tests check.
 */
final class FakeDarwin implements DarwinSyscalls {

    static final int ESRCH = 3;
    static final int ENOENT = 2;
    static final int EPERM = 1;
    static final int ENOMEM = 12;
    static final int EMFILE = 24;
    static final int KQ = 42;
    static final long UID = 501;

    /** One simulated process. */
    static final class Proc {
        final int pid;
        final long sec;
        final long usec;
        long ruid = UID;
        long ppid = 1;
        boolean zombie;

        Proc(int pid, long sec, long usec) {
            this.pid = pid;
            this.sec = sec;
            this.usec = usec;
        }

        long startTime() {
            return sec * 1_000_000 + usec;
        }
    }

    final PosixPlatform mac = PosixPlatform.forName("macos-aarch64").orElseThrow();
    final DarwinLayout layout = DarwinLayout.of(mac);

    private final Map<Integer, Proc> procs = new HashMap<>();
    private final Map<Integer, Proc> knotes = new HashMap<>();
    private final Map<String, Integer> failing = new HashMap<>();
    private final Map<Integer, Integer> shortAnswers = new HashMap<>();
    private final Map<Integer, byte[]> sockopts = new HashMap<>();
    private final Map<Integer, Integer> sockoptErrors = new HashMap<>();
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Deque<DarwinLayout.KEvent> held = new ArrayDeque<>();
    private boolean holding;
    /** The thread that last waited for events (the watcher's poll thread). */
    private volatile Thread poller;
    private int kqueues;
    private int closed;

    // ---- the test's controls ----------------------------------------------------------------

    synchronized Proc spawn(int pid, long sec, long usec) {
        if (procs.containsKey(pid)) {
            throw new IllegalStateException("pid " + pid + " is taken");
        }
        Proc p = new Proc(pid, sec, usec);
        procs.put(pid, p);
        return p;
    }

    /** The process exits and stays a zombie until {@link #reap}; its knote's event is queued. */
    synchronized void exit(int pid) {
        Proc p = procs.get(pid);
        p.zombie = true;
        if (knotes.get(pid) == p) {
            knotes.remove(pid);
            DarwinLayout.KEvent ev = new DarwinLayout.KEvent(pid, layout.EVFILT_PROC,
                    layout.EV_ONESHOT | layout.EV_EOF, layout.NOTE_EXIT, 0, 0);
            if (holding) {
                held.add(ev);
            } else {
                queue.add(ev);
            }
        }
    }

    synchronized void reap(int pid) {
        if (!procs.get(pid).zombie) {
            throw new IllegalStateException("pid " + pid + " is not a zombie");
        }
        procs.remove(pid);
    }

    /**
     * An event for {@code pid} that no exit caused (as a stale one looks to the watcher); being
     * delivered, it consumes the pid's knote ({@code EV_ONESHOT}).
     */
    synchronized void spuriousEvent(int pid) {
        knotes.remove(pid);
        queue.add(new DarwinLayout.KEvent(pid, layout.EVFILT_PROC, layout.EV_ONESHOT | layout.EV_EOF,
                layout.NOTE_EXIT, 0, 0));
    }

    /** Exit events are kept back until {@link #release()}. */
    synchronized void hold() {
        holding = true;
    }

    synchronized void release() {
        holding = false;
        queue.addAll(held);
        held.clear();
    }

    /** The watcher's poll thread, once it waited for events. */
    Thread poller() {
        return poller;
    }

    /** Returns once every queued event was read and the poll thread waits for the next; fails after 10 s. */
    void awaitIdle() throws InterruptedException {
        boolean idle = Poll.until(Duration.ofSeconds(10), Duration.ofMillis(1), () -> {
            Thread t = poller;
            return queue.isEmpty() && t != null && t.getState() == Thread.State.WAITING;
        }, Boolean::booleanValue);
        if (!idle) {
            throw new AssertionError("the poll thread did not come back to wait within 10 s");
        }
    }

    /** The poll thread's next wait throws this. */
    void throwInWait(Error e) {
        queue.add(e);
    }

    /** Fails every later call named {@code call} ({@code kqueue}, {@code kevent}, {@code EV_ADD}, {@code proc_pidinfo}) with {@code errno}. */
    synchronized void fail(String call, int errno) {
        failing.put(call, errno);
    }

    synchronized void heal(String call) {
        failing.remove(call);
    }

    /** proc_pidinfo of {@code pid} fills only {@code bytes}. */
    synchronized void shortAnswer(int pid, int bytes) {
        shortAnswers.put(pid, bytes);
    }

    synchronized void sockopt(int option, byte[] value) {
        sockopts.put(option, value);
    }

    synchronized void sockoptError(int option, int errno) {
        sockoptErrors.put(option, errno);
    }

    synchronized int knoteCount() {
        return knotes.size();
    }

    synchronized boolean hasKnote(int pid) {
        return knotes.containsKey(pid);
    }

    synchronized int kqueuesCreated() {
        return kqueues;
    }

    // ---- the door ---------------------------------------------------------------------------

    @Override
    public synchronized int kqueue() throws PosixException {
        Integer e = failing.get("kqueue");
        if (e != null) {
            throw new PosixException(e, "kqueue");
        }
        kqueues++;
        return KQ;
    }

    @Override
    public int kevent(int kq, byte[] changelist, int nchanges, byte[] eventlist, int nevents, long timeoutNanos)
            throws PosixException {
        if (kq != KQ) {
            throw new PosixException(9, "kevent");
        }
        if (nchanges > 0) {
            return changes(changelist, nchanges, eventlist, nevents);
        }
        poller = Thread.currentThread();
        Object first;
        try {
            first = timeoutNanos < 0 ? queue.take() : queue.poll(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new PosixException(4, "kevent");
        }
        if (first == null) {
            return 0;
        }
        if (first instanceof Error err) {
            throw err;
        }
        List<DarwinLayout.KEvent> out = new ArrayList<>();
        out.add((DarwinLayout.KEvent) first);
        while (out.size() < nevents && queue.peek() instanceof DarwinLayout.KEvent next) {
            out.add(next);
            queue.poll();
        }
        for (int i = 0; i < out.size(); i++) {
            layout.encode(out.get(i), eventlist, i);
        }
        return out.size();
    }

    private synchronized int changes(byte[] changelist, int nchanges, byte[] eventlist, int nevents)
            throws PosixException {
        Integer e = failing.get("kevent");
        if (e != null) {
            throw new PosixException(e, "kevent");
        }
        int written = 0;
        for (int i = 0; i < nchanges; i++) {
            DarwinLayout.KEvent c = layout.decodeKevent(changelist, i);
            int pid = (int) c.ident();
            int errno = 0;
            if (c.filter() != layout.EVFILT_PROC || c.fflags() != layout.NOTE_EXIT
                    || (c.flags() & layout.EV_RECEIPT) == 0) {
                errno = 22;
            } else if ((c.flags() & layout.EV_ADD) != 0) {
                Integer f = failing.get("EV_ADD");
                Proc p = procs.get(pid);
                if (f != null) {
                    errno = f;
                } else if (p == null || p.zombie) {
                    errno = ESRCH;
                } else if (!knotes.containsKey(pid)) {
                    knotes.put(pid, p); // an existing knote keeps its attachment, as in the kernel
                }
            } else if ((c.flags() & layout.EV_DELETE) != 0) {
                errno = knotes.remove(pid) != null ? 0 : ENOENT;
            }
            if (written < nevents) {
                layout.encode(new DarwinLayout.KEvent(pid, c.filter(), c.flags() | layout.EV_ERROR, c.fflags(), errno,
                        c.udata()), eventlist, written++);
            }
        }
        return written;
    }

    @Override
    public synchronized int proc_pidinfo(int pid, int flavor, long arg, byte[] buffer) throws PosixException {
        Integer e = failing.get("proc_pidinfo");
        if (e != null) {
            throw new PosixException(e, "proc_pidinfo");
        }
        if (flavor != 3 || arg != 0 || buffer.length < 136) {
            throw new PosixException(22, "proc_pidinfo");
        }
        Proc p = procs.get(pid);
        if (p == null || p.zombie) {
            throw new PosixException(ESRCH, "proc_pidinfo");
        }
        bsdinfo(buffer, p.pid, p.ppid, UID, p.ruid, 0x10, 2, p.sec, p.usec);
        return shortAnswers.getOrDefault(pid, 136);
    }

    /** A {@code struct proc_bsdinfo} at the offsets of {@code <sys/proc_info.h>} (not the table's). */
    static void bsdinfo(byte[] b, long pid, long ppid, long uid, long ruid, long flags, long status, long sec,
                        long usec) {
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(0, (int) flags);
        bb.putInt(4, (int) status);
        bb.putInt(12, (int) pid);
        bb.putInt(16, (int) ppid);
        bb.putInt(20, (int) uid);
        bb.putInt(24, 20); // pbi_gid
        bb.putInt(28, (int) ruid);
        bb.put(48, (byte) 's'); // pbi_comm
        bb.putLong(120, sec);
        bb.putLong(128, usec);
    }

    @Override
    public synchronized int getsockopt(int fd, int level, int optname, byte[] optval) throws PosixException {
        if (level != 0) {
            throw new PosixException(42, "getsockopt"); // ENOPROTOOPT: only SOL_LOCAL is modelled
        }
        Integer e = sockoptErrors.get(optname);
        if (e != null) {
            throw new PosixException(e, "getsockopt");
        }
        byte[] v = sockopts.get(optname);
        if (v == null) {
            throw new PosixException(22, "getsockopt");
        }
        int n = Math.min(v.length, optval.length);
        System.arraycopy(v, 0, optval, 0, n);
        return n;
    }

    @Override
    public synchronized void close(int fd) {
        closed++;
    }
}
