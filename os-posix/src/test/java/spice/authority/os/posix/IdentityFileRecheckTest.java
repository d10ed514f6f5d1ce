package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.payload.Snapshot;

/**
 * {@code identity.key} is proven again before every durable transition, relative to the retained
 * directory and without reading the key: a file that breaks the file rule (mode, links, symbolic
 * link) or is no longer the file the key was read from refuses the next start and suspend, and
 * nothing is written; restoring it makes them work again. These tests run as root, which ignores
 * permission bits: every refusal here comes from the authority's own checks.
 */
class IdentityFileRecheckTest {
    private static final Cancellation NONE = Cancellation.none();

    private TestTree tree;
    private Path leaf;
    private Path key;
    private RunAuthority authority;
    private ActiveRun live;
    private String keyHex;

    @BeforeEach
    void setUp() throws Exception {
        tree = TestTree.create();
        tree.dir("a", 0755);
        leaf = tree.resolve("a/auth");
        authority = RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
        key = leaf.resolve("identity.key");
        keyHex = HexFormat.of().formatHex(Arrays.copyOfRange(Files.readAllBytes(key), 40, 72));
        live = authority.start(new RunId("live"), NONE); // owns a run whose suspend is tried below
    }

    @AfterEach
    void tearDown() throws IOException {
        try {
            live.close();
        } catch (AuthorityException e) {
            throw new AssertionError(e);
        }
        authority.close();
        tree.close();
    }

    // ---- the file rule, via SecureDirectory.checkFile --------------------------------------

    @Test
    void checkFile_readsNothingAndReturnsTheIdentity_refusesMissingAndFifo() throws Exception {
        try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            Map<String, Object> a = Files.readAttributes(key, "unix:dev,ino", LinkOption.NOFOLLOW_LINKS);
            assertThat(d.checkFile("identity.key")).isEqualTo(new FileIdentity((Long) a.get("dev"), (Long) a.get("ino")));
            assertThat(Refusals.refusal(() -> d.checkFile("absent.state")).category())
                    .isEqualTo(DirectoryRefusedException.Category.MISSING);
            TestLibc.mkfifo(leaf.resolve("fifo.state"), 0600);
            Map<String, String> before = tree.snapshot();
            // Nothing is opened: a FIFO cannot block, and is refused for its type.
            assertThat(Refusals.refusal(() -> d.checkFile("fifo.state")).category())
                    .isEqualTo(DirectoryRefusedException.Category.TYPE);
            assertThat(tree.snapshot()).isEqualTo(before);
            Files.delete(leaf.resolve("fifo.state"));
        }
    }

    // ---- each change refuses start and suspend, writes nothing, and is undone -------------

    @Test
    void identityFileChmod0644_refusedAsMode_untilRestored() throws Exception {
        TestLibc.chmod(key, 0644);
        assertTransitionsRefused("MODE");
        TestLibc.chmod(key, 0600);
        assertTransitionsWork();
    }

    @Test
    void identityFileChmod0400_refusedAsMode_untilRestored() throws Exception {
        TestLibc.chmod(key, 0400);
        assertTransitionsRefused("MODE");
        TestLibc.chmod(key, 0600);
        assertTransitionsWork();
    }

    @Test
    void identityFileGainsAHardLink_refusedAsLinks_untilRemoved() throws Exception {
        Path link = tree.resolve("a/identity-copy");
        Files.createLink(link, key);
        assertTransitionsRefused("LINKS");
        Files.delete(link);
        assertTransitionsWork();
    }

    @Test
    void identityFileReplacedBySameContent_refusedAsIdentity_untilTheOriginalIsBack() throws Exception {
        Path saved = tree.resolve("a/original.key");
        byte[] content = Files.readAllBytes(key);
        Files.move(key, saved, StandardCopyOption.ATOMIC_MOVE);
        tree.file("a/auth/identity.key", content, 0600, (int) Libc.geteuid()); // same bytes, owner, mode: another inode
        assertThat(Files.readAllBytes(key)).isEqualTo(content);
        assertTransitionsRefused("IDENTITY");
        Files.move(saved, key, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        assertTransitionsWork();
    }

    @Test
    void identityFileReplacedBySymlinkToItself_refusedAsSymlink_untilTheOriginalIsBack() throws Exception {
        Path saved = tree.resolve("a/original.key");
        Files.move(key, saved, StandardCopyOption.ATOMIC_MOVE);
        tree.symlink("a/auth/identity.key", saved, (int) Libc.geteuid()); // leads to the very same inode
        assertTransitionsRefused("SYMLINK");
        Files.delete(key);
        Files.move(saved, key, StandardCopyOption.ATOMIC_MOVE);
        assertTransitionsWork();
    }

    // ---- helpers --------------------------------------------------------------------------

    private static String payload(String runId) {
        return "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"" + runId + "\",\"definition\":{\"name\":\"test\","
                + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":\"generation-1\","
                + "\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},\"seen_interaction_ids\":[],"
                + "\"last_sequence\":7,\"status\":\"suspended\"}";
    }

    private static Snapshot suspended(String runId) throws Exception {
        return Snapshot.decode(payload(runId).getBytes(StandardCharsets.UTF_8));
    }

    private Path stateFile(String runId) {
        return leaf.resolve(RecordCodec.fileStem(runId) + ".state");
    }

    /** The next start and suspend are refused with {@code rule}, and nothing under the tree changes. */
    private void assertTransitionsRefused(String rule) throws Exception {
        String prefix = "identity file refused, nothing written: " + key + ": " + rule + " (";
        Map<String, String> before = tree.snapshot();
        assertThatThrownBy(() -> authority.start(new RunId("fresh"), NONE)).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageStartingWith(prefix).hasMessageNotContaining(keyHex);
        assertThat(stateFile("fresh")).doesNotExist();
        assertThatThrownBy(() -> live.seal(suspended("live"), NONE)).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageStartingWith(prefix).hasMessageNotContaining(keyHex);
        assertThat(tree.snapshot()).as("nothing on disk changed").isEqualTo(before);
        assertThat(authority.inspect(new RunId("live")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
        assertThat(authority.isFenced(new RunId("live"))).isFalse();
        assertThat(live.isUncertain()).isFalse();
    }

    private void assertTransitionsWork() throws Exception {
        authority.start(new RunId("fresh"), NONE).close();
        assertThat(stateFile("fresh")).exists();
        live.seal(suspended("live"), NONE);
        assertThat(authority.inspect(new RunId("live")).orElseThrow().phase()).isEqualTo(RunPhase.SUSPENDED);
    }
}
