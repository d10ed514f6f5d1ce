package spice.authority.app.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.core.ActiveRun;
import spice.authority.core.Cancellation;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.ForwardingSecureDirectory;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * What {@link SessionRegistry} records of a session's leases, against a real run authority on a
 * real directory and a real host process ({@code sleep}).
 */
class SessionLeaseBookkeepingTest {
    private static final RunId RUN = new RunId("run-1");

    private Path base;
    private RunAuthority authority;
    private SessionRegistry registry;
    private Process host;

    /** Lock names whose release throws an Error once (as when memory runs out). */
    private final java.util.Set<String> failingUnlocks = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @BeforeEach
    void setUp() throws Exception {
        base = Files.createTempDirectory("spice-lease-book-");
        SecureDirectory real = SecureDirectories.provider().open(base.resolve("auth").toString(), OpenMode.CREATE_OR_VALIDATE);
        authority = RunAuthority.open(new ForwardingSecureDirectory(real) {
            @Override
            public StableLock lock(String name, LockMode mode) throws DirectoryRefusedException {
                StableLock lock = super.lock(name, mode);
                return new StableLock() {
                    @Override
                    public String name() {
                        return lock.name();
                    }

                    @Override
                    public FileIdentity identity() {
                        return lock.identity();
                    }

                    @Override
                    public void close() {
                        lock.close();
                        if (failingUnlocks.remove(name)) {
                            throw new OutOfMemoryError("test: injected after the unlock of " + name);
                        }
                    }
                };
            }
        }, new SecureRandom());
        ProcessWatcher watcher = SecureDirectories.provider().processWatcher();
        long euid = watcher.realUid(ProcessHandle.current().pid()).orElseThrow();
        registry = SessionStartTimeRecheckTest.registry(watcher, euid);
        host = new ProcessBuilder("sleep", "1000").start();
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            registry.closeAll("test over");
            authority.close();
        } finally {
            host.destroyForcibly();
            assertThat(host.waitFor(10, TimeUnit.SECONDS)).as("host process reaped").isTrue();
            try (Stream<Path> s = Files.walk(base)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    private static Snapshot suspended() throws Exception {
        return Snapshot.decode(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"));
    }

    /**
     * A sign that waited while its lease was released and the run imported again by the same
     * session ends by forgetting the lease it held: only that one. The newer lease stays the
     * session's, so closing the session releases it and nothing strands the run.
     */
    @Test
    void forget_dropsOnlyTheLeaseThatEnded_neverANewerOneOfTheSameRun() throws Exception {
        Session s = registry.open(host.pid(), true);
        ActiveRun first = authority.start(RUN, Cancellation.none());
        registry.leases.own(s, first);
        Envelope envelope = first.seal(suspended(), Cancellation.none()).envelope();
        registry.leases.release(s, first);

        RunImport imp = authority.prepareImport(envelope, Cancellation.none());
        imp.consume(Cancellation.none());
        ActiveRun second = imp.activate(Cancellation.none());
        registry.leases.own(s, second);

        registry.leases.forget(s, first); // the late end of the first lease's sign
        assertThat(registry.leases.ownedBy(s, RUN)).containsSame(second);
        assertThat(registry.leases.ownerOf(RUN)).containsSame(s);

        registry.close(s, "test: host gone");
        assertThat(second.isClosed()).as("the session's end released the newer lease").isTrue();
    }

    /**
     * A session's close lets go of every lease, and closes its watch, even when one release
     * throws an Error: the session is already marked closed and gone from the registry, so a
     * lease skipped there would keep its run's lock with nothing left to release it.
     */
    @Test
    void close_releasesEveryLeaseThoughOneReleaseThrowsAnError_thenThrowsIt() throws Exception {
        Session s = registry.open(host.pid(), true);
        ActiveRun a = authority.start(RunId.parse("run-a").orElseThrow(), Cancellation.none());
        ActiveRun b = authority.start(RunId.parse("run-b").orElseThrow(), Cancellation.none());
        registry.leases.own(s, a);
        registry.leases.own(s, b);
        failingUnlocks.add(RecordCodec.fileStem("run-a") + ".lock");
        failingUnlocks.add(RecordCodec.fileStem("run-b") + ".lock");

        assertThatThrownBy(() -> registry.close(s, "test: host gone")).isInstanceOf(OutOfMemoryError.class);
        assertThat(failingUnlocks).as("both unlocks were made").isEmpty();
        assertThat(a.isClosed()).isTrue();
        assertThat(b.isClosed()).isTrue();
        assertThat(registry.leases.ownerOf(new RunId("run-a"))).isEmpty();
        assertThat(registry.leases.ownerOf(new RunId("run-b"))).isEmpty();
        assertThat(registry.all()).isEmpty();
        assertThat(authority.outstandingLeases()).as("both store leases given back").isZero();
    }

    /** At shutdown one session's failing close does not keep the other sessions' leases. */
    @Test
    void closeAll_closesEverySessionThoughOneCloseThrows_thenThrowsIt() throws Exception {
        Session s1 = registry.open(host.pid(), true);
        Session s2 = registry.open(host.pid(), true);
        ActiveRun a = authority.start(RunId.parse("run-a").orElseThrow(), Cancellation.none());
        ActiveRun b = authority.start(RunId.parse("run-b").orElseThrow(), Cancellation.none());
        registry.leases.own(s1, a);
        registry.leases.own(s2, b);
        failingUnlocks.add(RecordCodec.fileStem("run-a") + ".lock");
        failingUnlocks.add(RecordCodec.fileStem("run-b") + ".lock");

        assertThatThrownBy(() -> registry.closeAll("test: shutting down")).isInstanceOf(OutOfMemoryError.class);
        assertThat(s1.isClosed()).isTrue();
        assertThat(s2.isClosed()).isTrue();
        assertThat(a.isClosed()).isTrue();
        assertThat(b.isClosed()).isTrue();
        assertThat(authority.outstandingLeases()).isZero();
    }

    @Test
    void forget_ofTheLeaseItHolds_dropsIt() throws Exception {
        Session s = registry.open(host.pid(), true);
        ActiveRun run = authority.start(RUN, Cancellation.none());
        registry.leases.own(s, run);
        run.close();
        registry.leases.forget(s, run);
        assertThat(registry.leases.ownedBy(s, RUN)).isEmpty();
        assertThat(registry.leases.ownerOf(RUN)).isEmpty();
    }

    @Test
    void declaredHostOnTcp_mustBeBelowInit() {
        for (long pid : new long[] {1, 0, -1}) {
            assertThatThrownBy(() -> registry.open(pid, false)).as("pid " + pid)
                    .isInstanceOf(SessionException.NotHost.class)
                    .hasMessageContaining("below init");
        }
        assertThat(registry.all()).isEmpty();
    }

}
