package spice.authority.app.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;

/**
 * {@link SessionRegistry#require} re-checks the host's start time: the exit watcher closes a
 * session asynchronously, and until it has, a pid reused by another process must not inherit the
 * session. The host is a real live child process ({@code sleep}) seen through the platform's
 * process watcher; pid reuse is simulated by a watcher that shifts every start time it reports
 * while the session is opened and stops shifting afterwards, so that the recorded start time no
 * longer matches the live process under that pid while its (real) exit watch stays silent.
 */
class SessionStartTimeRecheckTest {
    private ProcessWatcher platform;
    private ShiftingWatcher watcher;
    private SessionRegistry registry;
    private Process host;

    @BeforeEach
    void setUp() throws IOException, ProcessWatchException {
        platform = SecureDirectories.provider().processWatcher();
        watcher = new ShiftingWatcher(platform);
        long euid = platform.realUid(ProcessHandle.current().pid()).orElseThrow();
        registry = registry(watcher, euid);
        host = new ProcessBuilder("sleep", "1000").start();
    }

    /**
     * A registry wired as CDI wires it, over {@code processes} and the helper uid {@code euid}, with
     * this test's configuration and no metrics.
     */
    static SessionRegistry registry(ProcessWatcher processes, long euid) {
        SessionRegistry registry = new SessionRegistry();
        registry.processes = processes;
        registry.peers = PeerPolicy.tokenOnly(euid);
        registry.metrics = new SessionMetrics() {
            @Override
            public void sessionOpened() {}

            @Override
            public void sessionClosed() {}

            @Override
            public void transition(String kind, String result) {}
        };
        registry.config = new Config();
        registry.quotas = new Quotas();
        registry.leases = new LeaseBook();
        registry.leases.config = registry.config;
        registry.leases.quotas = registry.quotas;
        registry.quotas.config = registry.config;
        return registry;
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        try {
            registry.closeAll("test over");
        } finally {
            host.destroyForcibly();
            assertThat(host.waitFor(10, TimeUnit.SECONDS)).as("host process reaped").isTrue();
        }
    }

    @Test
    void require_hostStillTheProcessThatOpenedTheSession_accepted_onASocketAndOnTcp() throws ProcessWatchException {
        long realStart = platform.startTime(host.pid()).orElseThrow();
        Session socket = registry.open(host.pid(), true);
        Session tcp = registry.open(host.pid(), false);
        assertThat(socket.startTime()).isEqualTo(realStart);

        assertThat(registry.require(socket.id(), OptionalLong.of(host.pid()))).isSameAs(socket);
        assertThat(registry.require(tcp.id(), OptionalLong.empty())).isSameAs(tcp);
        assertThat(registry.require(socket.id(), OptionalLong.of(host.pid()))).as("a second call too").isSameAs(socket);
        assertThat(socket.isClosed()).isFalse();
        assertThat(tcp.isClosed()).isFalse();
        assertThat(registry.all()).containsExactlyInAnyOrder(socket, tcp);
    }

    @Test
    void require_pidNowHeldByAProcessWithAnotherStartTime_refused_andTheSessionClosedWithItsWatch() throws ProcessWatchException {
        long realStart = platform.startTime(host.pid()).orElseThrow();
        watcher.shift = 1;
        Session s = registry.open(host.pid(), true);
        watcher.shift = 0;
        // The pid now names a live process whose start time is not the recorded one (as after
        // the host exited and its pid was reused), and the exit watch has not fired.
        assertThat(s.startTime()).isEqualTo(realStart + 1);
        assertThat(platform.liveness(host.pid(), realStart)).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(platform.liveness(host.pid(), s.startTime())).isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(s.isClosed()).as("the exit watch stays silent: the process under the pid is alive").isFalse();

        assertThatThrownBy(() -> registry.require(s.id(), OptionalLong.of(host.pid())))
                .isInstanceOf(SessionException.UnknownSession.class).hasMessage("unknown or closed session");
        assertThat(s.isClosed()).isTrue();
        assertThat(s.closeReason()).isEqualTo("host process " + host.pid() + " exited");
        assertThat(registry.find(s.id())).isEmpty();
        assertThat(watcher.watchesClosed.get()).as("the exit watch was cancelled").isEqualTo(1);
        // Refused for good, even once the pid is back to the recorded start time.
        watcher.shift = 1;
        assertThatThrownBy(() -> registry.require(s.id(), OptionalLong.of(host.pid())))
                .isInstanceOf(SessionException.UnknownSession.class).hasMessage("unknown or closed session");
    }

    @Test
    void require_onTcp_pidReused_refused_andClosed() {
        // On TCP no peer pid is compared with the host's: the start time is the only guard.
        watcher.shift = 1;
        Session s = registry.open(host.pid(), false);
        watcher.shift = 0;

        assertThatThrownBy(() -> registry.require(s.id(), OptionalLong.empty()))
                .isInstanceOf(SessionException.UnknownSession.class).hasMessage("unknown or closed session");
        assertThat(s.isClosed()).isTrue();
        assertThat(registry.all()).isEmpty();
    }

    @Test
    void require_hostExitedBeforeItsExitWatchFired_refused_andClosed() throws InterruptedException {
        watcher.silenceWatches = true;
        Session s = registry.open(host.pid(), true);
        host.destroyForcibly();
        assertThat(host.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(s.isClosed()).as("no exit notification reached the registry").isFalse();

        assertThatThrownBy(() -> registry.require(s.id(), OptionalLong.empty()))
                .isInstanceOf(SessionException.UnknownSession.class).hasMessage("unknown or closed session");
        assertThat(s.isClosed()).isTrue();
        assertThat(registry.find(s.id())).isEmpty();
    }

    @Test
    void require_livenessUnknown_refusedAsUnavailable_sessionAndLeasesKept() {
        Session s = registry.open(host.pid(), true);
        watcher.unknown = true; // as with every descriptor in use: /proc cannot be read
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> registry.require(s.id(), OptionalLong.of(host.pid())))
                    .isInstanceOfSatisfying(SessionException.Unavailable.class, e -> {
                        assertThat(e.getMessage()).contains("cannot establish whether host process " + host.pid() + " is alive");
                    });
        }
        assertThat(s.isClosed()).as("unknown is not dead: the session stays").isFalse();
        assertThat(registry.find(s.id())).contains(s);
        assertThat(watcher.watchesClosed.get()).isZero();
        watcher.unknown = false;
        assertThat(registry.require(s.id(), OptionalLong.of(host.pid()))).isSameAs(s);
    }

    @Test
    void reapOwnerIfDead_unknownKeeps_deadCloses(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        watcher.silenceWatches = true; // the exit watcher is behind (or stopped)
        Session s = registry.open(host.pid(), true);
        // A real lease: a run started in an authority over a temporary directory.
        spice.authority.core.RunAuthority authority = authorityIn(dir);
        try {
            reapOnlyOnProof(s, authority);
        } finally {
            registry.closeAll("test over"); // its lease first, then the authority
            authority.close();
        }
    }

    /** A run authority over {@code dir}/authority. */
    private static spice.authority.core.RunAuthority authorityIn(java.nio.file.Path dir) throws Exception {
        return spice.authority.core.RunAuthority.open(
                SecureDirectories.provider().open(dir.resolve("authority").toString(), spice.authority.os.OpenMode.CREATE_OR_VALIDATE),
                new java.security.SecureRandom());
    }

    /** run-1 started, suspended with the corpus's minimal payload, and its host gone: the envelope. */
    private static spice.authority.snapshot.envelope.Envelope suspendedByGoneHost(spice.authority.core.RunAuthority authority)
            throws Exception {
        spice.authority.core.Cancellation none = spice.authority.core.Cancellation.none();
        spice.authority.snapshot.payload.Snapshot suspended = spice.authority.snapshot.payload.Snapshot.decode(
                spice.authority.snapshot.SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"));
        spice.authority.core.ActiveRun first = authority.start(new RunId("run-1"), none);
        spice.authority.snapshot.envelope.Envelope env = first.seal(suspended, none).envelope();
        first.close(); // its first host is gone
        return env;
    }

    /** The lease protocol over {@code registry} and {@code authority}, wired as CDI wires it. */
    static RunLeases runLeases(SessionRegistry registry, spice.authority.core.RunAuthority authority) {
        return new RunLeases(registry, registry.leases, registry.metrics, authority);
    }

    private void reapOnlyOnProof(Session s, spice.authority.core.RunAuthority authority) throws Exception {
        RunLeases leases = runLeases(registry, authority);
        registry.leases.own(s, authority.start(new RunId("run-1"), spice.authority.core.Cancellation.none()));
        assertThat(registry.leases.ownerOf(new RunId("run-1"))).contains(s);
        watcher.unknown = true;
        leases.reapOwnerIfDead(new RunId("run-1"));
        assertThat(s.isClosed()).as("an unknown owner keeps its run").isFalse();
        watcher.unknown = false;
        leases.reapOwnerIfDead(new RunId("run-1"));
        assertThat(s.isClosed()).as("a live owner keeps its run").isFalse();
        host.destroyForcibly();
        assertThat(host.waitFor(10, TimeUnit.SECONDS)).isTrue();
        leases.reapOwnerIfDead(new RunId("run-1"));
        assertThat(s.isClosed()).as("a proven death closes the owner").isTrue();
        assertThat(s.closeReason()).isEqualTo("host process " + host.pid() + " exited");
        assertThat(registry.find(s.id())).isEmpty();
        assertThat(registry.leases.ownerOf(new RunId("run-1"))).as("its lease released").isEmpty();
        assertThat(authority.outstandingLeases()).isZero();
    }

    /**
     * README ("Failing closed against a hostile host"): when the exit watcher is behind or has
     * stopped, "an import or `abandon` of a run whose owner is proven dead closes that owner first,
     * so no run is stranded". The owner here holds the run through a consumed import (the host died
     * between consume and activate): the run's lock is the import's, and reapOwnerIfDead looks only
     * at run leases, so the dead host's session is never closed and abandon stays busy until the
     * helper is restarted.
     */
    @Test
    void reapOwnerIfDead_hostDiedHoldingAConsumedImport_isClosedToo_soAbandonWorks(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        watcher.silenceWatches = true; // the exit watcher is behind (or stopped)
        Session s = registry.open(host.pid(), true);
        spice.authority.core.RunAuthority authority = authorityIn(dir);
        try {
            spice.authority.snapshot.envelope.Envelope env = suspendedByGoneHost(authority);
            // The importing host: prepare and consume (as POST /v1/imports and .../consume do), then it dies.
            spice.authority.core.RunImport imp = authority.prepareImport(env, spice.authority.core.Cancellation.none());
            registry.leases.addImport(s, imp, env);
            imp.consume(spice.authority.core.Cancellation.none());
            host.destroyForcibly();
            assertThat(host.waitFor(10, TimeUnit.SECONDS)).isTrue();

            // POST /v1/runs/run-1/abandon: reapOwnerIfDead first, then the abandon.
            runLeases(registry, authority).reapOwnerIfDead(new RunId("run-1"));
            assertThat(s.isClosed()).as("the dead importer's session is closed, as its exit would have").isTrue();
            assertThat(authority.abandon(new RunId("run-1"), spice.authority.core.Cancellation.none()).phase())
                    .isEqualTo(RunPhase.CANCELLED);
        } finally {
            registry.closeAll("test over");
            authority.close();
        }
    }

    /**
     * DELETE /v1/imports/{import} (RunLeases.abort: importOf, removeImport, then
     * RunImport.abort) racing the same import's activate (a host whose activate timed out on its
     * side and that aborts, as the reference engine does). abort waits for activate's monitor,
     * finds the import closed (by the activation) and returns normally: the API answers
     * {@code 204} "aborted cleanly" (clean means before consume: the run stays SUSPENDED and
     * importable), while the run is in fact ACTIVE at the next generation and its lease belongs to
     * the session. The host, told its abort was clean, never uses that lease; the run is held until
     * the session ends and can then only be abandoned.
     */
    @Test
    void abortRacingActivate_neverAnswersACleanAbort_whenTheImportWasActivated(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        Session s = registry.open(host.pid(), true);
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch proceed = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean();
        spice.authority.os.SecureDirectory slow = new spice.authority.os.ForwardingSecureDirectory(
                SecureDirectories.provider().open(dir.resolve("authority").toString(), spice.authority.os.OpenMode.CREATE_OR_VALIDATE)) {
            @Override
            public void writeAtomically(String name, byte[] data) throws spice.authority.os.DirectoryRefusedException {
                if (hold.getAndSet(false)) { // the activate write: slow (a slow fsync)
                    writing.countDown();
                    try {
                        proceed.await();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
                super.writeAtomically(name, data);
            }
        };
        spice.authority.core.RunAuthority authority = spice.authority.core.RunAuthority.open(slow, new java.security.SecureRandom());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            spice.authority.core.Cancellation none = spice.authority.core.Cancellation.none();
            spice.authority.snapshot.envelope.Envelope env = suspendedByGoneHost(authority);
            ImportTx tx = registry.leases.addImport(s, authority.prepareImport(env, none), env);
            tx.runImport().consume(none);

            // POST .../activate (RunLeases.activate), its write slow.
            hold.set(true);
            java.util.concurrent.Future<?> activate = pool.submit(() -> {
                spice.authority.core.ActiveRun run = registry.leases.importOf(s, tx.id()).runImport().activate(none);
                registry.leases.removeImport(tx);
                registry.leases.own(s, run);
                return null;
            });
            assertThat(writing.await(10, TimeUnit.SECONDS)).isTrue();
            // DELETE /v1/imports/{import} (RunLeases.abort), while the activate write runs.
            java.util.concurrent.atomic.AtomicReference<Thread> aborter = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.Future<String> abort = pool.submit(() -> {
                aborter.set(Thread.currentThread());
                ImportTx found = registry.leases.importOf(s, tx.id());
                registry.leases.removeImport(found);
                try {
                    found.runImport().abort();
                    return "204 aborted cleanly";
                } catch (spice.authority.core.AuthorityException.Uncertain e) {
                    return "500 uncertain";
                } catch (spice.authority.core.AuthorityException.State e) {
                    return "409 state_conflict"; // what the problem mapper answers for it
                }
            });
            // abort is now waiting for activate's monitor (the RunImport's).
            assertThat(spice.authority.app.it.Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(1),
                    () -> blockedIn(aborter.get(), "spice.authority.core.RunImport", "abort"), Boolean::booleanValue))
                    .as("abort waits for activate's monitor").isTrue();
            proceed.countDown();
            activate.get(10, TimeUnit.SECONDS);
            String answered = abort.get(10, TimeUnit.SECONDS);

            assertThat(authority.inspect(new RunId("run-1")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
            assertThat(registry.leases.ownedBy(s, new RunId("run-1"))).as("the session holds the ACTIVE lease").isPresent();
            assertThat(answered).as("the abort of an import that was activated is not a clean abort")
                    .isEqualTo("409 state_conflict");
        } finally {
            proceed.countDown();
            pool.shutdownNow();
            registry.closeAll("test over");
            authority.close();
        }
    }

    /** Whether {@code t} waits to enter a monitor in {@code className.method}. */
    private static boolean blockedIn(Thread t, String className, String method) {
        if (t == null || t.getState() != Thread.State.BLOCKED) {
            return false;
        }
        StackTraceElement[] stack = t.getStackTrace();
        return stack.length > 0 && stack[0].getClassName().equals(className) && stack[0].getMethodName().equals(method);
    }

    @Test
    void open_onPosix_comparesWithTheUidReadAtStart_neverReadsTheHelpersOwnUidAgain() {
        // POSIX sessions compare the host's real uid with PeerPolicy.effectiveUid (read once at
        // start), one /proc read per check, as before the Windows wiring.
        watcher.selfUidUnreadable = true;
        assertThat(registry.open(host.pid(), true).isClosed()).isFalse();
        assertThat(registry.openForAncestor(host.pid(), host.pid()).isClosed()).isFalse();
        assertThat(registry.all()).hasSize(2);
    }

    @Test
    void open_onPosix_hostOfAnotherUidThanTheHelpersStartUid_refused() throws ProcessWatchException {
        long euid = platform.realUid(ProcessHandle.current().pid()).orElseThrow();
        registry.peers = PeerPolicy.tokenOnly(euid + 1);
        assertThatThrownBy(() -> registry.open(host.pid(), true)).isInstanceOf(SessionException.NotHost.class);
        assertThatThrownBy(() -> registry.openForAncestor(host.pid(), host.pid())).isInstanceOf(SessionException.NotHost.class);
        assertThat(registry.all()).isEmpty();
    }

    @Test
    void open_withoutAUid_asWindows_asksThePlatformsIsOwnUser() {
        registry.peers = PeerPolicy.tokenOnly(-1);
        assertThat(registry.open(host.pid(), true).isClosed()).isFalse();
        watcher.selfUidUnreadable = true; // the platform's own-user answer is unknown: refused
        assertThatThrownBy(() -> registry.open(host.pid(), true)).isInstanceOf(SessionException.Unavailable.class);
        assertThat(registry.all()).hasSize(1);
    }

    @Test
    void open_startTimeUnknown_refusedAsUnavailable_nothingRegistered() {
        watcher.unknown = true;
        assertThatThrownBy(() -> registry.open(host.pid(), true))
                .isInstanceOfSatisfying(SessionException.Unavailable.class, e -> {
                    assertThat(e.getMessage()).contains("cannot establish the state of process " + host.pid());
                });
        assertThatThrownBy(() -> registry.openForAncestor(ProcessHandle.current().pid(), host.pid()))
                .isInstanceOf(SessionException.Unavailable.class);
        assertThat(registry.all()).isEmpty();
    }

    @Test
    void sessionsPerProcess_capped_otherProcessesUnaffected() throws Exception {
        for (int i = 0; i < 8; i++) {
            registry.open(host.pid(), true);
        }
        assertThatThrownBy(() -> registry.open(host.pid(), true))
                .isInstanceOfSatisfying(SessionException.Busy.class, e -> {
                    assertThat(e.setting()).isEqualTo("spice.authority.max-sessions-per-process");
                    assertThat(e.getMessage()).contains("spice.authority.max-sessions-per-process is 8");
                });
        Process other = new ProcessBuilder("sleep", "1000").start();
        try {
            assertThat(registry.open(other.pid(), true).isClosed()).isFalse();
        } finally {
            other.destroyForcibly();
            other.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void leaseAndImportQuotas_countPendingCalls_andAreGivenBack() {
        Session s = registry.open(host.pid(), true);
        java.util.List<LeaseBook.Admission> held = new java.util.ArrayList<>();
        for (int i = 0; i < 16; i++) {
            held.add(registry.leases.admitImport(s));
        }
        assertThatThrownBy(() -> registry.leases.admitImport(s)).isInstanceOfSatisfying(SessionException.Busy.class,
                e -> assertThat(e.setting()).isEqualTo("spice.authority.max-imports-per-session"))
                .hasMessageContaining("spice.authority.max-imports-per-session is 16");
        for (int i = 16; i < 256; i++) {
            held.add(registry.leases.admitLease(s));
        }
        assertThatThrownBy(() -> registry.leases.admitLease(s)).isInstanceOfSatisfying(SessionException.Busy.class,
                e -> assertThat(e.setting()).isEqualTo("spice.authority.max-leases-per-session"))
                .hasMessageContaining("spice.authority.max-leases-per-session is 256");
        held.forEach(LeaseBook.Admission::close);
        held.get(0).close(); // idempotent: gives back nothing twice
        registry.leases.admitLease(s).close();
        assertThat(s.pending.get()).isZero();
        assertThat(s.pendingImports.get()).isZero();
    }

    /**
     * The platform's watcher, except that every start time it reports is {@code shift} ticks
     * later than the real one (and the start times it is given are taken back accordingly), and
     * that, when {@code silenceWatches} is set, a watch is registered with no one.
     */
    private static final class ShiftingWatcher implements ProcessWatcher {
        private final ProcessWatcher real;
        volatile long shift;
        volatile boolean silenceWatches;
        /** Every check fails, as when the helper has no descriptor left. */
        volatile boolean unknown;
        /** The helper's own uid cannot be read (it was read once at start, before). */
        volatile boolean selfUidUnreadable;
        final AtomicInteger watchesClosed = new AtomicInteger();

        ShiftingWatcher(ProcessWatcher real) {
            this.real = real;
        }

        private void failIfUnknown() throws ProcessWatchException {
            if (unknown) {
                throw new ProcessWatchException("cannot read /proc: EMFILE (simulated)");
            }
        }

        @Override
        public OptionalLong startTime(long pid) throws ProcessWatchException {
            failIfUnknown();
            OptionalLong t = real.startTime(pid);
            return t.isPresent() ? OptionalLong.of(t.getAsLong() + shift) : t;
        }

        @Override
        public Liveness liveness(long pid, long startTime) {
            return unknown ? Liveness.UNKNOWN : real.liveness(pid, startTime - shift);
        }

        @Override
        public OptionalLong realUid(long pid) throws ProcessWatchException {
            failIfUnknown();
            if (selfUidUnreadable && pid == ProcessHandle.current().pid()) {
                throw new ProcessWatchException("the helper's own uid read again (simulated failure)");
            }
            return real.realUid(pid);
        }

        @Override
        public OptionalLong parentPid(long pid) throws ProcessWatchException {
            failIfUnknown();
            return real.parentPid(pid);
        }

        @Override
        public Watch watch(long pid, long startTime, Runnable onExit) throws ProcessWatchException {
            Watch w = silenceWatches ? null : real.watch(pid, startTime - shift, onExit);
            return new Watch() {
                @Override
                public long pid() {
                    return pid;
                }

                @Override
                public long startTime() {
                    return startTime;
                }

                /** Answers from the process table (as a platform without pidfds would), shifted like the rest. */
                @Override
                public Liveness liveness() {
                    return ShiftingWatcher.this.liveness(pid, startTime);
                }

                @Override
                public void close() {
                    watchesClosed.incrementAndGet();
                    if (w != null) {
                        w.close();
                    }
                }
            };
        }
    }

    private static final class Config implements HelperConfig {
        @Override
        public java.util.Optional<String> formats() {
            return java.util.Optional.empty();
        }

        @Override
        public Duration drainTimeout() {
            return Duration.ofSeconds(10);
        }

        @Override
        public Duration closeTimeout() {
            return Duration.ofSeconds(5);
        }

        @Override
        public int maxSessions() {
            return 256;
        }

        @Override
        public int maxControlBody() {
            return 65536;
        }

        @Override
        public int maxSessionsPerProcess() {
            return 8;
        }

        @Override
        public int maxLeasesPerSession() {
            return 256;
        }

        @Override
        public int maxImportsPerSession() {
            return 16;
        }

        @Override
        public int maxConnectionsPerProcess() {
            return 32;
        }

        @Override
        public int maxConnections() {
            return 512;
        }

        @Override
        public int maxUnauthenticatedConnections() {
            return 64;
        }

        @Override
        public Duration unauthenticatedTimeout() {
            return Duration.ofSeconds(10);
        }

        @Override
        public int fdReserve() {
            return 64;
        }

        @Override
        public long bodyBudget() {
            return 0;
        }

        @Override
        public Duration bodyTimeout() {
            return Duration.ofSeconds(30);
        }
    }
}
