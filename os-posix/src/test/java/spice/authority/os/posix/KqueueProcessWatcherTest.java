package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.ProcessWatcher.Liveness;

/**
 * The macOS kqueue watcher's logic on Linux, against the simulated kernel {@link FakeDarwin}:
 * exits, zombies, pid reuse and stale exit events, failures that must stay unknown, a dying poll
 * thread. The same watcher against the real kernel is {@code KqueueProcessWatcherMacTest}.
 */
class KqueueProcessWatcherTest {

    private final FakeDarwin kernel = new FakeDarwin();
    private final KqueueProcessWatcher watcher = new KqueueProcessWatcher(kernel, kernel.mac);

    /** A watch whose calls are counted. */
    private static final class Counter implements Runnable {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch fired = new CountDownLatch(1);

        @Override
        public void run() {
            calls.incrementAndGet();
            fired.countDown();
        }

        boolean firedWithin(long millis) throws InterruptedException {
            return fired.await(millis, TimeUnit.MILLISECONDS);
        }
    }

    private int nextMarker = 9000;

    /**
     * Returns once the poll thread read every event queued before this call: a marker process's
     * exit, queued after them, fired its watch. Whatever fired on an earlier event was handed to
     * the callback threads before the marker's callback.
     */
    private void settle() throws Exception {
        int pid = nextMarker++;
        kernel.spawn(pid, 10, 0);
        Counter marker = new Counter();
        try (ProcessWatcher.Watch w = watcher.watch(pid, watcher.startTime(pid).orElseThrow(), marker)) {
            kernel.exit(pid);
            assertThat(marker.firedWithin(5000)).as("the marker's exit is read").isTrue();
        }
        kernel.reap(pid);
    }

    @Test
    void watch_liveProcessExits_firesExactlyOnce_andReleasesTheKnote() throws Exception {
        FakeDarwin.Proc p = kernel.spawn(100, 1_700_000_000L, 250);
        long st = watcher.startTime(100).orElseThrow();
        assertThat(st).isEqualTo(1_700_000_000_000_250L);
        Counter c = new Counter();
        ProcessWatcher.Watch w = watcher.watch(100, st, c);
        assertThat(w.pid()).isEqualTo(100);
        assertThat(w.startTime()).isEqualTo(st);
        assertThat(kernel.hasKnote(100)).isTrue();
        assertThat(w.liveness()).isEqualTo(Liveness.ALIVE);
        settle();
        assertThat(c.calls).as("no call while alive").hasValue(0);

        kernel.exit(p.pid);
        assertThat(c.firedWithin(1000)).isTrue();
        settle();
        assertThat(c.calls).hasValue(1);
        assertThat(w.liveness()).isEqualTo(Liveness.DEAD);
        assertThat(watcher.registeredPids()).isZero();
        assertThat(kernel.knoteCount()).isZero();
        w.close();
        assertThat(c.calls).hasValue(1);
    }

    @Test
    void watch_pidWithNoProcess_firesAtOnce() throws Exception {
        Counter c = new Counter();
        try (ProcessWatcher.Watch w = watcher.watch(4242, 1, c)) {
            assertThat(c.firedWithin(1000)).isTrue();
            assertThat(w.liveness()).isEqualTo(Liveness.DEAD);
        }
        assertThat(kernel.knoteCount()).isZero();
        assertThat(watcher.liveness(4242, 1)).isEqualTo(Liveness.DEAD);
        assertThat(watcher.startTime(4242)).isEmpty();
    }

    @Test
    void zombie_countsAsExited_everywhere() throws Exception {
        kernel.spawn(101, 10, 0);
        long st = watcher.startTime(101).orElseThrow();
        kernel.exit(101); // not reaped: a zombie
        assertThat(watcher.startTime(101)).isEmpty();
        assertThat(watcher.realUid(101)).isEmpty();
        assertThat(watcher.parentPid(101)).isEmpty();
        assertThat(watcher.liveness(101, st)).isEqualTo(Liveness.DEAD);
        Counter c = new Counter();
        try (ProcessWatcher.Watch w = watcher.watch(101, st, c)) {
            assertThat(c.firedWithin(1000)).isTrue();
        }
        assertThat(kernel.knoteCount()).isZero();
    }

    @Test
    void watch_wrongStartTime_firesAtOnce_andTheProcessIsUntouched() throws Exception {
        kernel.spawn(102, 10, 5);
        long st = watcher.startTime(102).orElseThrow();
        Counter c = new Counter();
        try (ProcessWatcher.Watch w = watcher.watch(102, st + 1, c)) {
            assertThat(c.firedWithin(1000)).isTrue();
        }
        assertThat(watcher.liveness(102, st)).isEqualTo(Liveness.ALIVE);
        assertThat(watcher.liveness(102, st + 1)).isEqualTo(Liveness.DEAD);
        assertThat(kernel.knoteCount()).as("the knote of a refused watch is deleted").isZero();
    }

    @Test
    void watch_invalidPids_fireAtOnce() throws Exception {
        for (long pid : new long[] {0, -1, 1L << 40}) {
            Counter c = new Counter();
            try (ProcessWatcher.Watch w = watcher.watch(pid, 1, c)) {
                assertThat(c.firedWithin(1000)).as("pid %d", pid).isTrue();
            }
            assertThat(watcher.liveness(pid, 1)).isEqualTo(Liveness.DEAD);
            assertThat(watcher.startTime(pid)).isEmpty();
            assertThat(watcher.realUid(pid)).isEmpty();
        }
        assertThat(kernel.kqueuesCreated()).as("no kqueue for invalid pids").isZero();
    }

    @Test
    void pidReuse_staleExitEventOfThePredecessor_neverFiresTheSuccessorsWatch() throws Exception {
        kernel.spawn(200, 10, 1);
        Counter old = new Counter();
        ProcessWatcher.Watch wOld = watcher.watch(200, watcher.startTime(200).orElseThrow(), old);
        kernel.hold(); // the poll thread has not read the predecessor's exit yet
        kernel.exit(200);
        kernel.reap(200);
        kernel.spawn(200, 20, 2); // the pid is reused
        long stNew = watcher.startTime(200).orElseThrow();
        Counter successor = new Counter();
        ProcessWatcher.Watch wNew = watcher.watch(200, stNew, successor);
        assertThat(old.firedWithin(1000)).as("another start time at the pid proves the predecessor gone").isTrue();
        assertThat(wNew.liveness()).isEqualTo(Liveness.ALIVE);

        kernel.release(); // the stale exit event arrives now
        settle();
        assertThat(successor.calls).as("a stale event never fires the successor's watch").hasValue(0);
        assertThat(kernel.hasKnote(200)).as("the successor is still watched by the kernel").isTrue();
        assertThat(wNew.liveness()).isEqualTo(Liveness.ALIVE);

        kernel.exit(200);
        assertThat(successor.firedWithin(1000)).isTrue();
        settle();
        assertThat(old.calls).hasValue(1);
        assertThat(successor.calls).hasValue(1);
        wOld.close();
        wNew.close();
        assertThat(kernel.knoteCount()).isZero();
    }

    @Test
    void spuriousEvent_forALiveProcess_doesNotFire_andTheKnoteIsRegisteredAgain() throws Exception {
        kernel.spawn(201, 10, 1);
        Counter c = new Counter();
        ProcessWatcher.Watch w = watcher.watch(201, watcher.startTime(201).orElseThrow(), c);
        kernel.spuriousEvent(201);
        settle();
        assertThat(c.calls).hasValue(0);
        assertThat(kernel.hasKnote(201)).isTrue();
        kernel.exit(201);
        assertThat(c.firedWithin(1000)).isTrue();
        w.close();
    }

    @Test
    void reRegistrationFails_watchesStayUnfired_andALaterWatchRegistersAgain() throws Exception {
        kernel.spawn(203, 10, 1);
        long st = watcher.startTime(203).orElseThrow();
        Counter a = new Counter();
        ProcessWatcher.Watch wa = watcher.watch(203, st, a);
        kernel.fail("EV_ADD", FakeDarwin.ENOMEM);
        kernel.spuriousEvent(203); // consumes the knote; registering it again fails
        kernel.awaitIdle(); // (a marker could not register now)
        assertThat(a.calls).as("a failed re-registration is no death").hasValue(0);
        assertThat(kernel.hasKnote(203)).isFalse();
        assertThat(wa.liveness()).isEqualTo(Liveness.ALIVE);
        kernel.heal("EV_ADD");
        Counter b = new Counter();
        ProcessWatcher.Watch wb = watcher.watch(203, st, b);
        assertThat(kernel.hasKnote(203)).as("the next watch registers the knote again").isTrue();
        kernel.exit(203);
        assertThat(a.firedWithin(1000)).isTrue();
        assertThat(b.firedWithin(1000)).isTrue();
        wa.close();
        wb.close();
        assertThat(kernel.knoteCount()).isZero();
    }

    @Test
    void inspectionFailures_areUnknown_neverDead_andRegisterNothing() throws Exception {
        kernel.spawn(300, 10, 1);
        long st = watcher.startTime(300).orElseThrow();
        for (int errno : new int[] {FakeDarwin.EPERM, FakeDarwin.ENOMEM, FakeDarwin.EMFILE, 0}) {
            kernel.fail("proc_pidinfo", errno);
            assertThat(watcher.liveness(300, st)).as("errno %d", errno).isEqualTo(Liveness.UNKNOWN);
            assertThatThrownBy(() -> watcher.startTime(300)).isInstanceOf(ProcessWatchException.class);
            assertThatThrownBy(() -> watcher.realUid(300)).isInstanceOf(ProcessWatchException.class);
            assertThatThrownBy(() -> watcher.parentPid(300)).isInstanceOf(ProcessWatchException.class);
            Counter c = new Counter();
            assertThatThrownBy(() -> watcher.watch(300, st, c))
                    .isInstanceOf(ProcessWatchException.class).hasMessageContaining("cannot be read");
            assertThat(watcher.registeredPids()).isZero();
            assertThat(kernel.knoteCount()).as("a refused watch leaves no knote").isZero();
            kernel.heal("proc_pidinfo"); // for the marker of settle(); the next round fails it again
            settle();
            assertThat(c.calls).hasValue(0);
        }
        kernel.heal("proc_pidinfo");
        assertThat(watcher.liveness(300, st)).isEqualTo(Liveness.ALIVE);
    }

    @Test
    void shortProcPidinfoAnswer_isUnknown() throws Exception {
        kernel.spawn(301, 10, 1);
        long st = watcher.startTime(301).orElseThrow();
        kernel.shortAnswer(301, 64);
        assertThat(watcher.liveness(301, st)).isEqualTo(Liveness.UNKNOWN);
        assertThatThrownBy(() -> watcher.startTime(301)).isInstanceOf(ProcessWatchException.class);
    }

    @Test
    void eventForALiveHost_whileInspectionFails_neverFires() throws Exception {
        kernel.spawn(302, 10, 1);
        Counter c = new Counter();
        ProcessWatcher.Watch w = watcher.watch(302, watcher.startTime(302).orElseThrow(), c);
        kernel.fail("proc_pidinfo", FakeDarwin.EPERM);
        kernel.spuriousEvent(302);
        kernel.awaitIdle(); // (a marker could not be inspected now)
        assertThat(c.calls).as("an event that cannot be attributed is no proof").hasValue(0);
        assertThat(w.liveness()).isEqualTo(Liveness.UNKNOWN);
        assertThat(c.calls).hasValue(0);
        kernel.heal("proc_pidinfo");
        assertThat(w.liveness()).isEqualTo(Liveness.ALIVE);
        w.close();
    }

    @Test
    void exitWhileInspectionFails_isStillProven_byEsrchOnRegistration() throws Exception {
        kernel.spawn(303, 10, 1);
        Counter c = new Counter();
        ProcessWatcher.Watch w = watcher.watch(303, watcher.startTime(303).orElseThrow(), c);
        kernel.fail("proc_pidinfo", FakeDarwin.ENOMEM);
        kernel.exit(303);
        assertThat(c.firedWithin(1000)).as("registering a knote for a zombie answers ESRCH: a proof").isTrue();
        w.close();
    }

    @Test
    void kqueueExhausted_watchRefused_butLivenessStillAnswers() throws Exception {
        kernel.spawn(304, 10, 1);
        long st = watcher.startTime(304).orElseThrow();
        kernel.fail("kqueue", FakeDarwin.EMFILE);
        Counter c = new Counter();
        assertThatThrownBy(() -> watcher.watch(304, st, c))
                .isInstanceOf(ProcessWatchException.class).hasMessageContaining("kqueue");
        assertThat(watcher.liveness(304, st)).as("proc_pidinfo needs no descriptor").isEqualTo(Liveness.ALIVE);
        kernel.heal("kqueue");
        try (ProcessWatcher.Watch w = watcher.watch(304, st, c)) {
            assertThat(w.liveness()).isEqualTo(Liveness.ALIVE);
        }
        assertThat(c.calls).hasValue(0);
    }

    @Test
    void registrationFailsOtherThanEsrch_isUnknown_watchRefused() throws Exception {
        kernel.spawn(305, 10, 1);
        long st = watcher.startTime(305).orElseThrow();
        for (int errno : new int[] {FakeDarwin.ENOMEM, FakeDarwin.EPERM}) {
            kernel.fail("EV_ADD", errno);
            Counter c = new Counter();
            assertThatThrownBy(() -> watcher.watch(305, st, c)).isInstanceOf(ProcessWatchException.class);
            kernel.heal("EV_ADD"); // for the marker of settle(); the next round fails it again
            settle();
            assertThat(c.calls).hasValue(0);
            assertThat(watcher.registeredPids()).isZero();
        }
        kernel.heal("EV_ADD");
        kernel.fail("kevent", FakeDarwin.ENOMEM);
        assertThatThrownBy(() -> watcher.watch(305, st, () -> {})).isInstanceOf(ProcessWatchException.class);
        kernel.heal("kevent");
    }

    @Test
    void close_beforeExit_preventsTheCallback_andDeletesTheKnote() throws Exception {
        kernel.spawn(400, 10, 1);
        Counter c = new Counter();
        ProcessWatcher.Watch w = watcher.watch(400, watcher.startTime(400).orElseThrow(), c);
        w.close();
        w.close(); // idempotent
        assertThat(kernel.knoteCount()).isZero();
        assertThat(w.liveness()).as("a closed watch knows nothing").isEqualTo(Liveness.UNKNOWN);
        kernel.exit(400);
        settle();
        assertThat(c.calls).hasValue(0);
    }

    @Test
    void twoWatchesOfOnePid_shareAKnote_eachFiresOnce() throws Exception {
        kernel.spawn(401, 10, 1);
        long st = watcher.startTime(401).orElseThrow();
        Counter a = new Counter();
        Counter b = new Counter();
        Counter closed = new Counter();
        ProcessWatcher.Watch wa = watcher.watch(401, st, a);
        ProcessWatcher.Watch wb = watcher.watch(401, st, b);
        ProcessWatcher.Watch wc = watcher.watch(401, st, closed);
        assertThat(kernel.knoteCount()).isEqualTo(1);
        wc.close();
        assertThat(kernel.hasKnote(401)).as("closing one of three keeps the knote").isTrue();
        kernel.exit(401);
        assertThat(a.firedWithin(1000)).isTrue();
        assertThat(b.firedWithin(1000)).isTrue();
        settle();
        assertThat(a.calls).hasValue(1);
        assertThat(b.calls).hasValue(1);
        assertThat(closed.calls).hasValue(0);
        wa.close();
        wb.close();
        assertThat(watcher.registeredPids()).isZero();
    }

    @Test
    void secondWatch_afterTheExitBeforeItsEvent_firesBothAtOnce_exactlyOnce() throws Exception {
        kernel.spawn(402, 10, 1);
        long st = watcher.startTime(402).orElseThrow();
        Counter a = new Counter();
        Counter b = new Counter();
        ProcessWatcher.Watch wa = watcher.watch(402, st, a);
        kernel.hold();
        kernel.exit(402);
        ProcessWatcher.Watch wb = watcher.watch(402, st, b);
        assertThat(b.firedWithin(1000)).isTrue();
        assertThat(a.firedWithin(1000)).as("the same process: the first watch is proven too").isTrue();
        kernel.release();
        settle();
        assertThat(a.calls).hasValue(1);
        assertThat(b.calls).hasValue(1);
        assertThat(watcher.registeredPids()).isZero();
        wa.close();
        wb.close();
    }

    @Test
    void pollThreadDies_noWatchFires_newWatchesRefused_livenessStillFiresOnProof() throws Exception {
        kernel.spawn(500, 10, 1);
        kernel.spawn(501, 10, 2);
        Counter a = new Counter();
        Counter b = new Counter();
        ProcessWatcher.Watch wa = watcher.watch(500, watcher.startTime(500).orElseThrow(), a);
        ProcessWatcher.Watch wb = watcher.watch(501, watcher.startTime(501).orElseThrow(), b);
        assertThat(watcher.healthy()).isTrue();
        kernel.throwInWait(new InjectedWaitFailure());
        Thread poller = Poll.until(Duration.ofSeconds(5), Duration.ofMillis(1), kernel::poller, t -> t != null);
        assertThat(poller.join(Duration.ofSeconds(5))).as("the poll thread is dead").isTrue();
        assertThat(watcher.healthy()).isFalse();
        // A watch fired by the dying thread reads DEAD at once, before its callback has run.
        assertThat(wa.liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(a.calls).as("a watcher failure is not a death").hasValue(0);
        assertThat(b.calls).hasValue(0);

        kernel.exit(501); // nobody reads the event now: the poll thread is dead
        assertThat(b.calls).hasValue(0);
        assertThat(wb.liveness()).as("proc_pidinfo still proves the exit").isEqualTo(Liveness.DEAD);
        assertThat(b.firedWithin(1000)).isTrue();

        kernel.spawn(502, 10, 3);
        long st = watcher.startTime(502).orElseThrow();
        assertThatThrownBy(() -> watcher.watch(502, st, () -> {}))
                .isInstanceOf(ProcessWatchException.class).hasMessageContaining("process watcher stopped");
        wa.close();
        wb.close();
        assertThat(a.calls).hasValue(0);
        assertThat(b.calls).hasValue(1);
    }

    @Test
    void realUidAndParentPid_comeFromProcBsdinfo() throws Exception {
        FakeDarwin.Proc p = kernel.spawn(600, 10, 1);
        p.ruid = 777;
        p.ppid = 599;
        assertThat(watcher.realUid(600)).hasValue(777);
        assertThat(watcher.parentPid(600)).hasValue(599);
        assertThat(watcher.realUid(601)).isEmpty();
        assertThat(watcher.parentPid(601)).isEmpty();
    }

    @Test
    void onExitThatThrows_doesNotStopLaterCallbacks() throws Exception {
        kernel.spawn(700, 10, 1);
        kernel.spawn(701, 10, 2);
        Counter b = new Counter();
        try (ProcessWatcher.Watch wa = watcher.watch(700, watcher.startTime(700).orElseThrow(), () -> {
                    throw new IllegalStateException("test: callback failure (expected)");
                });
             ProcessWatcher.Watch wb = watcher.watch(701, watcher.startTime(701).orElseThrow(), b)) {
            kernel.exit(700);
            settle();
            kernel.exit(701);
            assertThat(b.firedWithin(1000)).isTrue();
        }
    }

    @Test
    void linuxTable_hasNoKqueueLayout() {
        assertThatThrownBy(() -> new KqueueProcessWatcher(kernel, PosixPlatform.forName("linux-x86_64").orElseThrow()))
                .isInstanceOf(IllegalStateException.class);
    }

    /** The failure injected into the poll thread's wait. */
    private static final class InjectedWaitFailure extends Error {
        private static final long serialVersionUID = 1L;

        InjectedWaitFailure() {
            super("injected by KqueueProcessWatcherTest (expected)");
        }
    }
}
