package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.os.FileNames;
import spice.authority.os.OpenMode;
import spice.authority.snapshot.RunId;

/**
 * A full disk, for real: the authority directory on a 256 KiB tmpfs that a filler file then fills.
 * A start or suspend whose record write hits ENOSPC wrote nothing: it is a retryable
 * {@code unavailable} naming the errno, the run is not fenced, no temporary file is left, and the
 * same call works as soon as space is freed, without reopening anything. Needs root (mount).
 */
@EnabledOnOs(OS.LINUX)
class DiskFullTest {
    private static final Cancellation NONE = Cancellation.none();

    private TestTree tree;
    private Path mount;
    private boolean mounted;
    private Path leaf;
    private Path filler;
    private RunAuthority authority;

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to mount a tmpfs");
        tree = TestTree.create();
        mount = tree.dir("mnt", 0755);
        ChildJvm.Result r = ChildJvm.run(null, null,
                List.of("mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", mount.toString()));
        assumeTrue(r.exit() == 0, "cannot mount a tmpfs here: " + r);
        mounted = true;
        leaf = mount.resolve("auth");
        filler = mount.resolve("filler");
        authority = RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
    }

    @AfterEach
    void tearDown() throws IOException {
        try {
            if (authority != null) {
                authority.close(); // closes the directory descriptor: the mount is not busy
            }
        } finally {
            try {
                if (mounted) {
                    ChildJvm.Result r = ChildJvm.run(null, null, List.of("umount", mount.toString()));
                    if (r.exit() != 0) {
                        ChildJvm.run(null, null, List.of("umount", "-l", mount.toString()));
                    }
                }
            } finally {
                if (tree != null) {
                    tree.close();
                }
            }
        }
    }

    /** Writes the filler file until the file system has no block left. */
    private void fillTheDisk() throws IOException {
        byte[] block = new byte[4096];
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(block);
                out.flush();
            }
        } catch (IOException e) {
            if (!e.getMessage().contains("No space left on device")) {
                throw e;
            }
        }
    }

    private void freeTheDisk() throws IOException {
        Files.delete(filler);
    }

    private Path stateFile(String runId) {
        return leaf.resolve(RecordCodec.fileStem(runId) + ".state");
    }

    private List<String> temporaries() throws IOException {
        try (Stream<Path> s = Files.list(leaf)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> FileNames.temporaryTarget(n).isPresent()).toList();
        }
    }

    @Test
    void start_onAFullDisk_isRetryableUnavailable_notFenced_andWorksOnceSpaceIsFreed() throws Exception {
        fillTheDisk();
        assertThatThrownBy(() -> authority.start(new RunId("full"), NONE)).isInstanceOfSatisfying(AuthorityException.Unavailable.class,
                e -> {
                    assertThat(e.retryable()).isTrue();
                    assertThat(e.getMessage()).startsWith("start full: nothing written: write: ENOSPC (");
                });
        assertThat(authority.isFenced(new RunId("full"))).isFalse();
        assertThat(stateFile("full")).doesNotExist();
        assertThat(temporaries()).isEmpty();
        assertThat(authority.outstandingLeases()).isZero();

        freeTheDisk();
        ActiveRun run = authority.start(new RunId("full"), NONE); // the same call, the same authority
        assertThat(authority.inspect(new RunId("full")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
        run.close();
    }

    @Test
    void suspend_onAFullDisk_isRetryableUnavailable_runStaysLive_andTheSameCallWorksOnceSpaceIsFreed() throws Exception {
        ActiveRun run = authority.start(new RunId("live"), NONE);
        byte[] active = Files.readAllBytes(stateFile("live"));
        fillTheDisk();
        assertThatThrownBy(() -> run.seal(TestSnapshots.suspended("live"), NONE))
                .isInstanceOfSatisfying(AuthorityException.Unavailable.class,
                        e -> assertThat(e.getMessage()).startsWith("suspend live: nothing written: write: ENOSPC ("));
        assertThat(authority.isFenced(new RunId("live"))).isFalse();
        assertThat(run.isUncertain()).isFalse();
        assertThat(Files.readAllBytes(stateFile("live"))).isEqualTo(active);
        assertThat(temporaries()).isEmpty();

        freeTheDisk();
        run.seal(TestSnapshots.suspended("live"), NONE);
        assertThat(authority.inspect(new RunId("live")).orElseThrow().phase()).isEqualTo(RunPhase.SUSPENDED);
        run.close();
    }
}
