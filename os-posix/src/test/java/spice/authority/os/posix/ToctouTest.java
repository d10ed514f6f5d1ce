package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.DirectoryRefusedException.Category.IDENTITY;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.MODE;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.PERMS;
import static spice.authority.os.DirectoryRefusedException.Category.SYMLINK;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;
import static spice.authority.os.posix.Refusals.PROVIDER;
import static spice.authority.os.posix.Refusals.assertRefused;
import static spice.authority.os.posix.TestTree.ATTACKER_UID;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;

/**
 * The directory changes after it was bound. Operations stay on the retained descriptor;
 * {@link SecureDirectory#revalidate()} (run before every durable transition) refuses until the
 * path is restored. "The authority" is modelled as: revalidate, then write.
 */
class ToctouTest {

    private static final String RECORD = "run-0.state";

    private TestTree tree;
    private Path leaf;
    private SecureDirectory dir;

    @BeforeEach
    void setUp() throws Exception {
        tree = TestTree.create();
        tree.dir("a", 0755);
        leaf = tree.resolve("a/auth");
        dir = PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE);
    }

    @AfterEach
    void tearDown() throws IOException {
        dir.close();
        tree.close();
    }

    /** The authority's durable step: prove the binding, then write through the descriptor. */
    private void transition(byte[] data) throws DirectoryRefusedException {
        dir.revalidate();
        dir.writeAtomically(RECORD, data);
    }

    private static long count(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.count();
        }
    }

    @Test
    void renamedAfterOpen_handleStillWritesTheMovedDirectory_neverTheOldPath() throws Exception {
        Path moved = tree.resolve("a/moved");
        Files.move(leaf, moved);
        dir.writeAtomically(RECORD, new byte[] {1});
        assertThat(moved.resolve(RECORD)).exists();
        assertThat(leaf).doesNotExist();
        Files.move(moved, leaf);
    }

    @Test
    void renamedAfterOpen_revalidationRefuses_thenRenameBackRestoresService() throws Exception {
        Path moved = tree.resolve("a/moved");
        Files.move(leaf, moved);
        assertRefused(tree, MISSING, leaf, () -> transition(new byte[] {1}));
        assertThat(count(moved)).isZero();

        Files.move(moved, leaf);
        transition(new byte[] {2});
        assertThat(Files.readAllBytes(leaf.resolve(RECORD))).containsExactly(2);
    }

    @Test
    void replacedByLookAlike_refusedAsIdentity_nothingLandsInEither() throws Exception {
        Path moved = tree.resolve("a/moved");
        Files.move(leaf, moved);
        tree.dir("a/auth", 0700); // same owner, same mode, different inode
        assertRefused(tree, IDENTITY, leaf, () -> transition(new byte[] {1}));
        assertThat(count(leaf)).isZero();
        assertThat(count(moved)).isZero();

        TestTree.deleteTree(leaf);
        Files.move(moved, leaf);
        transition(new byte[] {2});
    }

    @Test
    void replacedBySymlinkToItself_refusedAsSymlink() throws Exception {
        Path moved = tree.resolve("a/moved");
        Files.move(leaf, moved);
        tree.symlink("a/auth", moved, 0);
        assertRefused(tree, SYMLINK, leaf, () -> transition(new byte[] {1}));
        assertThat(count(moved)).isZero();

        Files.delete(leaf);
        Files.move(moved, leaf);
        transition(new byte[] {2});
    }

    @Test
    void ancestorMadeGroupWritable_refusedUntilRestored() throws Exception {
        Path ancestor = tree.resolve("a");
        TestLibc.chmod(ancestor, 0775);
        assertRefused(tree, PERMS, ancestor, () -> transition(new byte[] {1}));
        TestLibc.chmod(ancestor, 0755);
        transition(new byte[] {2});
    }

    @Test
    void ancestorGivenToAnotherUser_refusedUntilRestored() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        Path ancestor = tree.resolve("a");
        TestLibc.lchown(ancestor, ATTACKER_UID, ATTACKER_UID);
        assertRefused(tree, OWNER, ancestor, () -> transition(new byte[] {1}));
        TestLibc.lchown(ancestor, 0, 0);
        transition(new byte[] {2});
    }

    @Test
    void leafModeLoosenedAfterOpen_refusedUntilRestored() throws Exception {
        TestLibc.chmod(leaf, 0755);
        assertRefused(tree, MODE, leaf, () -> transition(new byte[] {1}));
        TestLibc.chmod(leaf, 0700);
        transition(new byte[] {2});
    }

    // ---- racing swaps ---------------------------------------------------------------------

    /** A thread that keeps exchanging two names with renameat2(RENAME_EXCHANGE). */
    private static final class Swapper implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicLong swaps = new AtomicLong();
        private final Thread thread;

        Swapper(Path a, Path b) {
            thread = Thread.ofPlatform().name("swapper").start(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment sa = arena.allocateFrom(a.toString());
                    MemorySegment sb = arena.allocateFrom(b.toString());
                    MemorySegment cs = TestLibc.captureSegment(arena);
                    while (!stop.get()) {
                        TestLibc.exchange(sa, sb, cs);
                        swaps.incrementAndGet();
                    }
                    if (swaps.get() % 2 != 0) { // leave both names as they were
                        TestLibc.exchange(sa, sb, cs);
                    }
                }
            });
        }

        @Override
        public void close() {
            stop.set(true);
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while stopping the swapper", e);
            }
        }
    }

    /** Prefer tmpfs: fsync is free there, so 10,000 open-and-write rounds take about a second. */
    private static Path fastScratch() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of("/tmp");
    }

    @Test
    void leafSwappedWithSymlinkToAttacker_inLoop_zeroWritesEscape() throws Exception {
        try (TestTree t = TestTree.create(fastScratch())) {
            t.dir("attacker", 0700);
            Path real = t.dir("swap/auth", 0700);
            Path evil = t.symlink("swap/evil", t.resolve("attacker"), 0);
            long[] outcome = race(real.toString(), new Swapper(real, evil), 10_000);
            assertThat(count(t.resolve("attacker"))).as("writes that escaped").isZero();
            assertThat(Files.isSymbolicLink(evil)).isTrue();
            assertThat(outcome[0]).as("rounds that wrote").isPositive();
            assertThat(outcome[1]).as("rounds refused").isPositive();
            try (Stream<Path> s = Files.list(real)) {
                assertThat(s.map(p -> p.getFileName().toString())).containsExactly(RECORD);
            }
        }
    }

    @Test
    void ancestorSwappedWithSymlinkToLookAlikeTree_inLoop_zeroWritesEscape() throws Exception {
        try (TestTree t = TestTree.create(fastScratch())) {
            Path lookAlike = t.dir("attacker/auth", 0700);
            Path realAnc = t.dir("swap/anc", 0755);
            t.dir("swap/anc/auth", 0700);
            Path evil = t.symlink("swap/evil", t.resolve("attacker"), 0);
            long[] outcome = race(realAnc.resolve("auth").toString(), new Swapper(realAnc, evil), 3_000);
            assertThat(count(lookAlike)).as("writes that escaped").isZero();
            assertThat(outcome[0]).isPositive();
            assertThat(outcome[1]).isPositive();
        }
    }

    /** Open-and-write rounds while the swapper runs; returns {written, refused}. */
    private static long[] race(String path, Swapper swapper, int rounds) throws Exception {
        long written = 0;
        long refused = 0;
        try (swapper) {
            for (int i = 0; i < rounds; i++) {
                try (SecureDirectory d = PROVIDER.open(path, OpenMode.CREATE_OR_VALIDATE)) {
                    d.revalidate();
                    d.writeAtomically(RECORD, Integer.toString(i).getBytes());
                    written++;
                } catch (DirectoryRefusedException e) {
                    assertThat(e.category()).as(e.getMessage()).isIn(SYMLINK, TYPE, IDENTITY);
                    refused++;
                }
            }
        }
        return new long[] {written, refused};
    }
}
