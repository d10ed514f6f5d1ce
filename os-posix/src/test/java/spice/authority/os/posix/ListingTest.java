package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.DirectoryRefusedException.Category.NAME;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.SYMLINK;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;
import static spice.authority.os.posix.Refusals.PROVIDER;
import static spice.authority.os.posix.Refusals.assertRefused;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;

/**
 * {@link SecureDirectory#list()} reads the retained descriptor with {@code getdents64}, never a
 * path, and fails as a whole (category IO) rather than return part of the directory;
 * {@link SecureDirectory#removeTemporary} removes only a temporary of ours.
 */
@EnabledOnOs(OS.LINUX)
class ListingTest {

    private static final String HEX24 = "0123456789abcdef01234567";

    private TestTree tree;
    private Path leaf;
    private SecureDirectory dir;

    @BeforeEach
    void setUp() throws Exception {
        tree = TestTree.create();
        leaf = tree.resolve("auth");
        dir = PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE);
    }

    @AfterEach
    void tearDown() throws IOException {
        dir.close();
        tree.close();
    }

    private static Set<String> openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void list_namesEveryKindOfEntry_sorted_withoutDotAndDotDot() throws Exception {
        assertThat(dir.list()).isEmpty();
        dir.writeAtomically("b.state", new byte[1]);
        dir.lock("a.lock", spice.authority.os.LockMode.NON_BLOCKING).close();
        Files.createDirectory(leaf.resolve("sub.state"));
        Files.createSymbolicLink(leaf.resolve("link.state"), Path.of("/etc/passwd"));
        TestLibc.mkfifo(leaf.resolve("fifo"), 0600);
        Files.write(leaf.resolve("." + "b.state." + HEX24 + ".tmp"), new byte[0]);
        // A name that is not UTF-8 (bytes 61 FF 62), made by the shell: Java cannot spell it.
        ChildJvm.Result r = ChildJvm.run(null, null, List.of("sh", "-c", "touch \"$1/$(printf 'a\\377b')\"", "sh", leaf.toString()));
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(dir.list()).containsExactly(".b.state." + HEX24 + ".tmp", "a.lock", "a\uFFFDb", "b.state", "fifo",
                "link.state", "sub.state");
    }

    @Test
    void list_manyEntries_needSeveralGetdentsCalls_andAllComeBack() throws Exception {
        FaultySyscalls door = new FaultySyscalls();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            String name = String.format("run-%064x.state", i);
            Files.write(leaf.resolve(name), new byte[0]);
            expected.add(name);
        }
        try (SecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.VALIDATE_ONLY, door)) {
            assertThat(d.list()).containsExactlyElementsOf(expected);
        }
        // 1500 entries of 96 bytes do not fit one 32 KiB buffer; the last call returns 0.
        assertThat(door.count(FaultySyscalls.Call.GETDENTS)).isGreaterThanOrEqualTo(6);
    }

    @Test
    void list_getdentsFailsOnTheFirstOrALaterCall_throwsIo_neverAPartialList_andLeaksNoDescriptor() throws Exception {
        for (int i = 0; i < 1500; i++) {
            Files.write(leaf.resolve(String.format("run-%064x.state", i)), new byte[0]);
        }
        FaultySyscalls door = new FaultySyscalls();
        try (SecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.VALIDATE_ONLY, door)) {
            d.list(); // warm up
            Set<String> fds = openFds();
            for (int skip : new int[] {0, 1, 3}) {
                door.fail(FaultySyscalls.Call.GETDENTS, "EIO", skip, false);
                assertThat(assertRefused(tree, IO, leaf.toString(), d::list).detail()).isEqualTo("getdents64: EIO");
            }
            door.fail(FaultySyscalls.Call.OPEN_LISTING, "EMFILE");
            assertThat(assertRefused(tree, IO, leaf.toString(), d::list).detail()).isEqualTo("openat: EMFILE");
            assertThat(openFds()).isEqualTo(fds);
            assertThat(d.list()).hasSize(1500); // the directory stays usable
        }
    }

    @Test
    void list_afterThePathWasMovedAndReplaced_listsTheRetainedDirectory() throws Exception {
        dir.writeAtomically("mine.state", new byte[1]);
        Files.move(leaf, tree.resolve("moved"));
        tree.dir("auth", 0700);
        Files.write(leaf.resolve("planted.state"), new byte[1]);
        assertThat(dir.list()).containsExactly("mine.state");
    }

    @Test
    void decode_malformedRecords_failInsteadOfListingLess() {
        PosixPlatform p = Libc.P;
        byte[] good = dirent(p, "abc", 24);
        List<String> out = new ArrayList<>();
        Dirents.decode(p, good, good.length, out);
        assertThat(out).containsExactly("abc");
        assertThatThrownBy(() -> Dirents.decode(p, good, good.length - 1, new ArrayList<>()))
                .isInstanceOf(IllegalArgumentException.class); // record longer than the buffer
        byte[] tooShort = dirent(p, "abc", 8);
        assertThatThrownBy(() -> Dirents.decode(p, tooShort, tooShort.length, new ArrayList<>()))
                .isInstanceOf(IllegalArgumentException.class); // record shorter than its header
        byte[] unterminated = dirent(p, "abcde", 24);
        assertThatThrownBy(() -> Dirents.decode(p, unterminated, 24, new ArrayList<>()))
                .isInstanceOf(IllegalArgumentException.class); // no NUL inside the record
        assertThatThrownBy(() -> Dirents.decode(p, dirent(p, "", 24), 24, new ArrayList<>()))
                .isInstanceOf(IllegalArgumentException.class); // empty name
    }

    /** A buffer with one {@code linux_dirent64} header claiming {@code reclen} bytes, then {@code name}. */
    private static byte[] dirent(PosixPlatform p, String name, int reclen) {
        byte[] b = new byte[Math.max(reclen, p.direntName + name.length() + 1)];
        ByteBuffer.wrap(b).order(ByteOrder.nativeOrder()).putShort(p.direntReclen, (short) reclen);
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(n, 0, b, p.direntName, Math.min(n.length, b.length - p.direntName));
        return b;
    }

    // ---- removeTemporary -------------------------------------------------------------------

    @Test
    void removeTemporary_removesOnlyARegularFileOfOursUnderATemporaryName() throws Exception {
        String temp = ".x.state." + HEX24 + ".tmp";
        Files.write(leaf.resolve(temp), new byte[3]);
        assertThat(dir.removeTemporary(temp)).isTrue();
        assertThat(dir.removeTemporary(temp)).isFalse();
        assertThat(dir.list()).isEmpty();

        for (String name : List.of("x.state", ".x.state", ".x.lock." + HEX24 + ".tmp", ".x.state." + HEX24 + ".tmp2",
                "../auth/.x.state." + HEX24 + ".tmp")) {
            dir.writeAtomically("x.state", new byte[1]);
            assertRefused(tree, NAME, leaf + "/" + name, () -> dir.removeTemporary(name));
        }
        Files.createSymbolicLink(leaf.resolve(temp), leaf.resolve("x.state"));
        assertRefused(tree, SYMLINK, leaf + "/" + temp, () -> dir.removeTemporary(temp));
        Files.delete(leaf.resolve(temp));
        Files.createDirectory(leaf.resolve(temp));
        assertRefused(tree, TYPE, leaf + "/" + temp, () -> dir.removeTemporary(temp));
        Files.delete(leaf.resolve(temp));
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        tree.file("auth/" + temp, new byte[1], 0600, TestTree.ATTACKER_UID);
        assertRefused(tree, OWNER, leaf + "/" + temp, () -> dir.removeTemporary(temp));
    }

    @Test
    void removeTemporary_inAValidateOnlyDirectory_isRefusedAndRemovesNothing() throws Exception {
        String temp = ".x.state." + HEX24 + ".tmp";
        Files.write(leaf.resolve(temp), new byte[3]);
        try (SecureDirectory ro = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            assertThatThrownBy(() -> ro.removeTemporary(temp)).isInstanceOf(IllegalStateException.class);
        }
        assertThat(Files.exists(leaf.resolve(temp))).isTrue();
    }
}
