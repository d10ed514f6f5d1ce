package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import spice.authority.app.session.LeaseBook;
import spice.authority.app.session.RunLeases;
import spice.authority.app.session.SessionRegistry;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.ForwardingSecureDirectory;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.snapshot.contract.ProblemCode;
import spice.authority.snapshot.RunId;

/**
 * A start fenced before its record exists is visible: when the rename of a start fails (EIO from
 * a fake door in front of a real directory), the run is fenced with no record on disk, and its
 * view and the listing still show it, {@code "fenced": true} and not owned, in the phase the start
 * would have written, until a restart reads the truth from disk.
 */
class FencedStartViewTest {
    @org.junit.jupiter.api.io.TempDir
    Path root;
    private RunAuthority authority;

    /** A real directory whose record writes fail at the rename, with EIO, while {@code failing} is set. */
    private static final class FailingRename extends ForwardingSecureDirectory {
        volatile boolean failing;

        FailingRename(SecureDirectory real) {
            super(real);
        }

        @Override
        public void writeAtomically(String name, byte[] data) throws DirectoryRefusedException {
            if (failing) {
                // The rename was called and failed: the caller cannot tell whether it took effect.
                throw new DirectoryRefusedException(DirectoryRefusedException.Category.IO, path() + "/" + name,
                        "renameat: EIO (injected)");
            }
            super.writeAtomically(name, data);
        }
    }

    @AfterEach
    void tearDown() {
        if (authority != null) {
            authority.close();
        }
    }

    private static RunResources resources(RunAuthority a) {
        RunResources r = new RunResources();
        r.authority = a;
        r.leases = new RunLeases(new SessionRegistry(), new LeaseBook(), new Metrics(), a);
        return r;
    }

    private static String json(Object v) {
        return new String(Json.bytes(v), StandardCharsets.UTF_8);
    }

    private List<String> records() throws Exception {
        try (Stream<Path> s = Files.list(root.resolve("authority"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".state")).sorted().toList();
        }
    }

    @Test
    void startWhoseRenameFails_noRecordOnDisk_viewAndListingSayFenced_notOwned_untilARestart() throws Exception {
        Path dirPath = root.resolve("authority");
        FailingRename dir = new FailingRename(SecureDirectories.provider().open(dirPath.toString(), OpenMode.CREATE_OR_VALIDATE));
        authority = RunAuthority.open(dir, new SecureRandom());
        authority.start(new RunId("run-before"), Cancellation.none()).close();
        RunResources api = resources(authority);

        dir.failing = true;
        assertThatThrownBy(() -> authority.start(new RunId("run-lost"), Cancellation.none())).isInstanceOf(AuthorityException.Uncertain.class);
        dir.failing = false;
        assertThat(records()).as("no record of run-lost on disk").hasSize(1);

        assertThat(json(api.get("run-lost")))
                .isEqualTo("{\"run_id\":\"run-lost\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":false,\"fenced\":true}");
        assertThat(api.listRuns()).extracting(v -> json(v)).containsExactly(
                "{\"run_id\":\"run-before\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":false}",
                "{\"run_id\":\"run-lost\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":false,\"fenced\":true}");
        // Another run without a record is still unknown.
        assertThatThrownBy(() -> api.get("run-never")).isInstanceOf(ApiException.class)
                .satisfies(e -> assertThat(((ApiException) e).code()).isEqualTo(ProblemCode.NOT_FOUND));

        // A restart reads the truth: the start never landed, and the fence is gone with the process.
        authority.close();
        authority = RunAuthority.open(SecureDirectories.provider().open(dirPath.toString(), OpenMode.CREATE_OR_VALIDATE),
                new SecureRandom());
        RunResources restarted = resources(authority);
        assertThatThrownBy(() -> restarted.get("run-lost")).isInstanceOf(ApiException.class)
                .satisfies(e -> assertThat(((ApiException) e).code()).isEqualTo(ProblemCode.NOT_FOUND));
        assertThat(restarted.listRuns()).extracting(v -> v.runId()).containsExactly("run-before");
    }
}
