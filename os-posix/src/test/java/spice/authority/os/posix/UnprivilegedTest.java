package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.posix.TestTree.ATTACKER_UID;
import static spice.authority.os.posix.TestTree.HELPER_UID;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The helper runs as an unprivileged uid ({@value TestTree#HELPER_UID}) and a second uid
 * ({@value TestTree#ATTACKER_UID}) acts as the attacker, both through setpriv. These cases
 * matter because root ignores permission bits and owns everything "trusted".
 */
class UnprivilegedTest {

    private static final int U = HELPER_UID;
    private static ChildJvm child;
    private TestTree tree;

    @BeforeAll
    static void requireRootAndSetpriv() throws IOException {
        assumeTrue(TestTree.isRoot(), "setpriv runs need root (skipped: not root)");
        assumeTrue(ChildJvm.setprivAvailable(), "setpriv not found (util-linux): skipped");
        child = new ChildJvm();
    }

    @AfterAll
    static void closeChild() throws IOException {
        if (child != null) {
            child.close();
        }
    }

    @BeforeEach
    void setUp() throws IOException {
        tree = TestTree.create();
        tree.dir("home", 0755, U);
    }

    @AfterEach
    void tearDown() throws IOException {
        tree.close();
    }

    private String p(String rel) {
        return tree.resolve(rel).toString();
    }

    private void assertHelperRefused(String op, String path, String category, String component) throws IOException {
        Map<String, String> before = tree.snapshot();
        ChildJvm.Result r = child.probe(U, null, op, path);
        assertThat(r.exit()).as(r.toString()).isEqualTo(1);
        assertThat(r.line()).isEqualTo("REFUSED " + category + " " + component);
        assertThat(tree.snapshot()).as("nothing on disk changed").isEqualTo(before);
    }

    private static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    private static int uid(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    }

    @Test
    void helper_initCheckExercise_inItsOwnHome() throws IOException {
        assertThat(child.probe(U, null, "init", p("home/auth")).line()).isEqualTo("OK created=true");
        assertThat(child.probe(U, null, "check", p("home/auth")).line()).isEqualTo("OK");
        assertThat(child.probe(U, null, "exercise", p("home/auth")).line()).isEqualTo("OK");
        assertThat(child.probe(U, null, "init", p("home/auth")).line()).isEqualTo("OK created=false");
        Path leaf = tree.resolve("home/auth");
        assertThat(uid(leaf)).isEqualTo(U);
        assertThat(mode(leaf)).isEqualTo(0700);
        assertThat(uid(leaf.resolve("run-x.state"))).isEqualTo(U);
        assertThat(mode(leaf.resolve("run-x.state"))).isEqualTo(0600);
        assertThat(mode(leaf.resolve("run-x.lock"))).isEqualTo(0600);
    }

    @Test
    void helper_checkMissing_refusedAndNothingCreated() throws IOException {
        assertHelperRefused("check", p("home/auth"), "MISSING", p("home/auth"));
    }

    @Test
    void attacker_squatsLeafInStickyDirectory_helperRefusesOwner() throws IOException {
        tree.dir("shared", 01777);
        ChildJvm.runOk(ATTACKER_UID, "mkdir", "-m", "0700", p("shared/auth"));
        assertHelperRefused("init", p("shared/auth"), "OWNER", p("shared/auth"));
        ChildJvm.runOk(ATTACKER_UID, "chmod", "0777", p("shared/auth"));
        assertHelperRefused("init", p("shared/auth"), "OWNER", p("shared/auth"));
    }

    @Test
    void helper_createsInStickyRootDirectory_attackerCannotTouchIt() throws IOException {
        tree.dir("shared", 01777);
        assertThat(child.probe(U, null, "exercise", p("shared/auth")).line()).isEqualTo("OK");
        ChildJvm.Result r = ChildJvm.run(ATTACKER_UID, null, java.util.List.of("mv", p("shared/auth"), p("shared/x")));
        assertThat(r.exit()).isNotZero(); // sticky bit: the attacker cannot rename the helper's directory
        assertThat(child.probe(U, null, "check", p("shared/auth")).line()).isEqualTo("OK");
    }

    @Test
    void attacker_plantsSymlinkInAncestry_helperRefusesSymlink() throws IOException {
        tree.dir("shared", 01777);
        tree.dir("home/real", 0755, U);
        ChildJvm.runOk(ATTACKER_UID, "ln", "-s", p("home/real"), p("shared/link"));
        assertHelperRefused("init", p("shared/link/auth"), "SYMLINK", p("shared/link"));
    }

    @Test
    void ancestorOwnedByAttacker_helperRefusesOwner() throws IOException {
        tree.dir("theirs", 0755, ATTACKER_UID);
        tree.dir("theirs/mine", 0755, U);
        assertHelperRefused("init", p("theirs/mine/auth"), "OWNER", p("theirs"));
    }

    @Test
    void stickyDirectoryOfTheHelperWithAttackersChild_refusesOwner() throws IOException {
        tree.dir("home/drop", 01777, U);
        ChildJvm.runOk(ATTACKER_UID, "mkdir", "-m", "0755", p("home/drop/planted"));
        assertHelperRefused("init", p("home/drop/planted/auth"), "OWNER", p("home/drop/planted"));
    }

    @Test
    void helpersOwnGroupWritableAncestor_refusesPerms() throws IOException {
        tree.dir("home/gw", 0775, U);
        assertHelperRefused("init", p("home/gw/auth"), "PERMS", p("home/gw"));
    }

    @Test
    void rootOwnedLeaf_isNotTheHelpers_refusesOwner() throws IOException {
        tree.dir("home/open", 0755, 0);
        tree.dir("home/closed", 0700, 0); // not even traversable by the helper
        assertHelperRefused("check", p("home/open"), "OWNER", p("home/open"));
        assertHelperRefused("init", p("home/closed"), "OWNER", p("home/closed"));
    }

    @Test
    void recordOwnedByRootInHelpersDirectory_refusesOwner() throws IOException {
        assertThat(child.probe(U, null, "init", p("home/auth")).exit()).isZero();
        tree.file("home/auth/run-x.state", new byte[] {1}, 0600, 0);
        Map<String, String> before = tree.snapshot();
        ChildJvm.Result r = child.probe(U, null, "read", p("home/auth"), "run-x.state");
        assertThat(r.line()).isEqualTo("REFUSED OWNER " + p("home/auth/run-x.state"));
        r = child.probe(U, null, "exercise", p("home/auth"));
        assertThat(r.line()).isEqualTo("REFUSED OWNER " + p("home/auth/run-x.state"));
        assertThat(tree.snapshot()).isEqualTo(before);
    }

    @Test
    void helperUnderUmask0277_createsUsableTreeWithExactModes() throws IOException {
        assertThat(child.probe(U, "0277", "exercise", p("home/x/y/auth")).line()).isEqualTo("OK");
        assertThat(mode(tree.resolve("home/x"))).isEqualTo(0700);
        assertThat(mode(tree.resolve("home/x/y"))).isEqualTo(0700);
        assertThat(mode(tree.resolve("home/x/y/auth"))).isEqualTo(0700);
        assertThat(mode(tree.resolve("home/x/y/auth/run-x.state"))).isEqualTo(0600);
        assertThat(mode(tree.resolve("home/x/y/auth/run-x.lock"))).isEqualTo(0600);
    }
}
