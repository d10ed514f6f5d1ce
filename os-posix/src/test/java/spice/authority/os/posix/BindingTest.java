package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.MODE;
import static spice.authority.os.DirectoryRefusedException.Category.NAME;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.PERMS;
import static spice.authority.os.DirectoryRefusedException.Category.SYMLINK;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;
import static spice.authority.os.posix.Refusals.PROVIDER;
import static spice.authority.os.posix.Refusals.assertOpenRefused;
import static spice.authority.os.posix.Refusals.assertRefused;
import static spice.authority.os.posix.TestTree.ATTACKER_UID;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;

/** Binding the directory (wire-format d.6): path rules, ancestry, leaf, positive controls. */
class BindingTest {

    private TestTree tree;

    @BeforeEach
    void setUp() throws IOException {
        tree = TestTree.create();
    }

    @AfterEach
    void tearDown() throws IOException {
        tree.close();
    }

    private static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    // ---- path syntax --------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"relative/auth", "./auth", "", "/", "/tmp//auth", "/tmp/./auth", "/tmp/../tmp/auth",
            "/tmp/auth/", "/tmp/a\u0000b"})
    void open_uncleanPath_refusedAsName(String path) throws Exception {
        for (OpenMode mode : OpenMode.values()) {
            var e = Refusals.refusal(() -> PROVIDER.open(path, mode).close());
            assertThat(e.category()).as(e.getMessage()).isEqualTo(NAME);
        }
    }

    @Test
    void open_trailingSlashThroughSymlink_refusedAsNameBeforeAnySyscall() throws Exception {
        tree.dir("real", 0700);
        tree.symlink("link", tree.resolve("real"), 0);
        assertRefused(tree, NAME, tree.resolve("link") + "/", () -> PROVIDER.open(tree.resolve("link") + "/",
                OpenMode.CREATE_OR_VALIDATE).close());
    }

    @Test
    void open_dotDotComponent_namesTheComponent() throws Exception {
        var e = Refusals.refusal(() -> PROVIDER.open(tree.base + "/x/../y", OpenMode.VALIDATE_ONLY).close());
        assertThat(e.component()).isEqualTo(tree.base + "/x/..");
    }

    // ---- symbolic links -----------------------------------------------------------------

    @Test
    void open_rootOwnedSymlinkInAncestry_refused() throws Exception {
        tree.dir("real", 0755);
        tree.symlink("link", tree.resolve("real"), 0);
        assertOpenRefused(tree, SYMLINK, tree.resolve("link"), tree.resolve("link/auth").toString());
        assertThat(tree.resolve("real/auth")).doesNotExist();
    }

    @Test
    void open_otherUsersSymlinkInAncestry_refused() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to create another user's symlink");
        tree.dir("real", 0755);
        tree.symlink("link", tree.resolve("real"), ATTACKER_UID);
        assertOpenRefused(tree, SYMLINK, tree.resolve("link"), tree.resolve("link/auth").toString());
    }

    @Test
    void open_symlinkedLeaf_refused() throws Exception {
        tree.dir("target", 0700);
        tree.symlink("auth", tree.resolve("target"), 0);
        assertOpenRefused(tree, SYMLINK, tree.resolve("auth"), tree.resolve("auth").toString());
    }

    @Test
    void open_danglingSymlinkLeaf_refusedAndTargetNotCreated() throws Exception {
        tree.symlink("auth", tree.resolve("nowhere"), 0);
        assertOpenRefused(tree, SYMLINK, tree.resolve("auth"), tree.resolve("auth").toString());
        assertThat(tree.resolve("nowhere")).doesNotExist();
    }

    // ---- ancestry -----------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(ints = {0775, 0757, 0777, 0770, 0703})
    void open_writableNonStickyAncestor_refusedAsPerms(int mode) throws Exception {
        tree.dir("shared", mode);
        assertOpenRefused(tree, PERMS, tree.resolve("shared"), tree.resolve("shared/auth").toString());
    }

    @Test
    void open_stickyAncestorOwnedByAnotherUser_refusedAsOwner() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        tree.dir("shared", 01777, ATTACKER_UID);
        assertOpenRefused(tree, OWNER, tree.resolve("shared"), tree.resolve("shared/auth").toString());
    }

    @Test
    void open_ancestorOwnedByAnotherUser_refusedAsOwner() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        tree.dir("theirs", 0755, ATTACKER_UID);
        tree.dir("theirs/mine", 0755);
        assertOpenRefused(tree, OWNER, tree.resolve("theirs"), tree.resolve("theirs/mine/auth").toString());
    }

    @Test
    void open_ancestorOwnedByOverflowUid_refusedAsOwner() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        tree.dir("unmapped", 0755, 65534);
        assertOpenRefused(tree, OWNER, tree.resolve("unmapped"), tree.resolve("unmapped/auth").toString());
    }

    @Test
    void open_stickyRootOwnedAncestorWithUntrustedChild_refusedAsOwner() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        tree.dir("shared", 01777);
        tree.dir("shared/planted", 0755, ATTACKER_UID);
        assertOpenRefused(tree, OWNER, tree.resolve("shared/planted"),
                tree.resolve("shared/planted/auth").toString());
    }

    @Test
    void open_squattedLeafInStickyDirectory_refusedAsOwner() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        tree.dir("shared", 01777);
        tree.dir("shared/auth", 0700, ATTACKER_UID);
        assertOpenRefused(tree, OWNER, tree.resolve("shared/auth"), tree.resolve("shared/auth").toString());
    }

    @Test
    void open_fileInAncestry_refusedAsType() throws Exception {
        tree.file("plain", new byte[0], 0644, 0);
        assertOpenRefused(tree, TYPE, tree.resolve("plain"), tree.resolve("plain/auth").toString());
    }

    // ---- leaf ---------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(ints = {0750, 0701, 0600, 0500, 02700, 01700, 04700, 0755, 0000})
    void open_leafWithWrongMode_refusedAsModeAndNeverChmodded(int mode) throws Exception {
        Path leaf = tree.dir("auth", mode);
        assertOpenRefused(tree, MODE, leaf, leaf.toString());
        assertThat(mode(leaf)).isEqualTo(mode);

        TestLibc.chmod(leaf, 0700); // restoring the mode restores service
        try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            assertThat(d.createdLeaf()).isFalse();
        }
    }

    @Test
    void open_leafOwnedByAnotherUser_refusedAsOwner() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        Path leaf = tree.dir("auth", 0700, ATTACKER_UID);
        assertOpenRefused(tree, OWNER, leaf, leaf.toString());
    }

    @Test
    void open_leafIsAFile_refusedAsType() throws Exception {
        Path leaf = tree.file("auth", new byte[] {1}, 0700, 0);
        assertOpenRefused(tree, TYPE, leaf, leaf.toString());
    }

    @Test
    void open_leafIsAFifo_refusedAsTypeWithoutBlocking() throws Exception {
        Path leaf = tree.resolve("auth");
        TestLibc.mkfifo(leaf, 0700);
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
                () -> assertOpenRefused(tree, TYPE, leaf, leaf.toString()));
    }

    @Test
    void validateOnly_missingLeaf_refusedAsMissingAndNothingCreated() throws Exception {
        Path leaf = tree.resolve("a/b/auth");
        assertRefused(tree, MISSING, tree.resolve("a"),
                () -> PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY).close());
    }

    // ---- positive controls --------------------------------------------------------------

    @Test
    void create_missingComponents_createdWithMode0700() throws Exception {
        Path leaf = tree.resolve("x/y/auth");
        try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE)) {
            assertThat(d.createdLeaf()).isTrue();
            assertThat(d.path()).isEqualTo(leaf.toString());
            assertThat(d.identity().inode())
                    .isEqualTo(((Number) Files.getAttribute(leaf, "unix:ino")).longValue());
        }
        assertThat(mode(leaf)).isEqualTo(0700);
        assertThat(mode(tree.resolve("x"))).isEqualTo(0700);
        assertThat(mode(tree.resolve("x/y"))).isEqualTo(0700);
    }

    @Test
    void open_existingValidLeaf_validatedWithoutAnyChange() throws Exception {
        Path leaf = tree.dir("auth", 0700);
        Map<String, String> before = tree.snapshot();
        for (OpenMode mode : OpenMode.values()) {
            try (SecureDirectory d = PROVIDER.open(leaf.toString(), mode)) {
                assertThat(d.createdLeaf()).isFalse();
                assertThat(d.openMode()).isEqualTo(mode);
                d.revalidate();
            }
        }
        assertThat(tree.snapshot()).isEqualTo(before);
    }

    @Test
    void create_inSetgidParent_leafIsExactly0700() throws Exception {
        tree.dir("sg", 02755);
        Path leaf = tree.resolve("sg/mid/auth");
        try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE)) {
            assertThat(d.createdLeaf()).isTrue();
        }
        assertThat(mode(leaf)).isEqualTo(0700);
        try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            assertThat(d.createdLeaf()).isFalse();
        }
    }

    @Test
    void create_inStickyRootOwnedParent_succeeds() throws Exception {
        tree.dir("shared", 01777);
        try (SecureDirectory d = PROVIDER.open(tree.resolve("shared/auth").toString(), OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("identity.key", new byte[72]);
        }
    }

    @Test
    void create_directlyUnderTmp_succeeds() throws Exception {
        Path leaf = Path.of("/tmp/spice-authority-test-" + UUID.randomUUID());
        try {
            try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE)) {
                assertThat(d.createdLeaf()).isTrue();
                d.writeAtomically("identity.key", new byte[72]);
            }
            assertThat(mode(leaf)).isEqualTo(0700);
            try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
                assertThat(d.read("identity.key", 72)).hasSize(72);
            }
        } finally {
            TestTree.deleteTree(leaf);
        }
    }
}
