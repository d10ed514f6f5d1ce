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
import spice.authority.app.runtime.ServeContext;
import spice.authority.core.ActiveRun;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * What {@link SessionRegistry} records of a session's leases, against a real run authority on a
 * real directory and a real host process ({@code sleep}).
 */
class SessionLeaseBookkeepingTest {
    private static final String RUN = "run-1";

    private Path base;
    private RunAuthority authority;
    private SessionRegistry registry;
    private Process host;

    @BeforeEach
    void setUp() throws Exception {
        base = Files.createTempDirectory("spice-lease-book-");
        authority = RunAuthority.open(SecureDirectories.provider().open(base.resolve("auth").toString(),
                OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
        ProcessWatcher watcher = SecureDirectories.provider().processWatcher();
        long euid = watcher.realUid(ProcessHandle.current().pid()).orElseThrow();
        registry = new SessionRegistry();
        registry.serve = new ServeContext(authority, null, null, null, null, null, watcher, euid);
        registry.metrics = new SessionMetrics() {
            @Override
            public void sessionOpened() {}

            @Override
            public void sessionClosed() {}
        };
        registry.config = new SessionStartTimeRecheckTest.Config();
        registry.quotas = new Quotas();
        registry.quotas.config = registry.config;
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
        ActiveRun first = authority.start(RunId.parse(RUN).orElseThrow(), Cancellation.none());
        registry.own(s, first);
        Envelope envelope = first.seal(suspended(), Cancellation.none()).envelope();
        registry.release(s, RUN);

        RunImport imp = authority.prepareImport(envelope, Cancellation.none());
        imp.consume(Cancellation.none());
        ActiveRun second = imp.activate(Cancellation.none());
        registry.own(s, second);

        registry.forget(s, first); // the late end of the first lease's sign
        assertThat(registry.ownedBy(s, RUN)).containsSame(second);
        assertThat(registry.ownerOf(RUN)).containsSame(s);

        registry.close(s, "test: host gone");
        assertThat(second.isClosed()).as("the session's end released the newer lease").isTrue();
    }

    @Test
    void forget_ofTheLeaseItHolds_dropsIt() throws Exception {
        Session s = registry.open(host.pid(), true);
        ActiveRun run = authority.start(RunId.parse(RUN).orElseThrow(), Cancellation.none());
        registry.own(s, run);
        run.close();
        registry.forget(s, run);
        assertThat(registry.ownedBy(s, RUN)).isEmpty();
        assertThat(registry.ownerOf(RUN)).isEmpty();
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
