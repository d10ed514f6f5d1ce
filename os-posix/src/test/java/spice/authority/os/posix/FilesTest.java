package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.DirectoryRefusedException.Category.BUSY;
import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.DirectoryRefusedException.Category.LINKS;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.MODE;
import static spice.authority.os.DirectoryRefusedException.Category.NAME;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.SYMLINK;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;
import static spice.authority.os.posix.Refusals.PROVIDER;
import static spice.authority.os.posix.Refusals.assertRefused;
import static spice.authority.os.posix.TestTree.ATTACKER_UID;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/** Files inside the directory (wire-format d.4, d.5, d.7): reads, atomic writes, locks. */
class FilesTest {

    private static final String RECORD = "run-" + "ab".repeat(32) + ".state";
    private static final String LOCK = "run-" + "ab".repeat(32) + ".lock";

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

    private List<String> names() throws IOException {
        try (Stream<Path> s = Files.list(leaf)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    // ---- round trips --------------------------------------------------------------------

    @Test
    void writeThenRead_roundTripsWithMode0600AndNoTemporaryLeft() throws Exception {
        byte[] one = "first\n".getBytes(StandardCharsets.UTF_8);
        byte[] two = "second, longer\n".getBytes(StandardCharsets.UTF_8);
        dir.writeAtomically(RECORD, one);
        assertThat(dir.read(RECORD, 100)).isEqualTo(one);
        dir.writeAtomically(RECORD, two);
        assertThat(dir.read(RECORD, 100)).isEqualTo(two);
        dir.writeAtomically("empty.state", new byte[0]);
        assertThat(dir.read("empty.state", 0)).isEmpty();
        assertThat(names()).containsExactly("empty.state", RECORD);
        assertThat(mode(leaf.resolve(RECORD))).isEqualTo(0600);
        assertThat(Files.getAttribute(leaf.resolve(RECORD), "unix:uid")).isEqualTo((int) Libc.geteuid());
    }

    @Test
    void read_largeFile_readCompletely() throws Exception {
        byte[] big = new byte[300_000];
        new java.util.Random(1).nextBytes(big);
        dir.writeAtomically(RECORD, big);
        assertThat(dir.read(RECORD, big.length)).isEqualTo(big);
    }

    @Test
    void read_overLimit_refusedAsSize() throws Exception {
        dir.writeAtomically(RECORD, new byte[73]);
        assertThat(dir.read(RECORD, 73)).hasSize(73);
        assertRefused(tree, Category.SIZE, leaf + "/" + RECORD, () -> dir.read(RECORD, 72));
    }

    @Test
    void read_missing_refusedAsMissing() throws Exception {
        assertRefused(tree, MISSING, leaf + "/" + RECORD, () -> dir.read(RECORD, 10));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", "../x", "a/b", ".hidden", ".run.state.0123.tmp", "x\u0000y", "-flag",
            "name with space", "ünïcode"})
    void badNames_refusedAsName(String name) throws Exception {
        for (Refusals.Action a : List.<Refusals.Action>of(
                () -> dir.read(name, 10), () -> dir.writeAtomically(name, new byte[1]),
                () -> dir.lock(name, LockMode.NON_BLOCKING).close())) {
            assertThat(Refusals.refusal(a).category()).isEqualTo(NAME);
        }
        assertThat(names()).isEmpty();
    }

    @Test
    void writeAtomically_lockName_refusedAsName() throws Exception {
        assertRefused(tree, NAME, leaf + "/" + LOCK, () -> dir.writeAtomically(LOCK, new byte[1]));
        assertRefused(tree, NAME, leaf + "/" + RECORD, () -> dir.lock(RECORD, LockMode.NON_BLOCKING).close());
    }

    // ---- hostile objects in place of a record or lock file ----------------------------

    enum Hostile { FIFO, SOCKET, DIRECTORY, SYMLINK, HARDLINK, MODE_0644, MODE_0400, OTHER_OWNER }

    private Category plant(Hostile h, String name) throws IOException {
        Path p = leaf.resolve(name);
        switch (h) {
            case FIFO -> TestLibc.mkfifo(p, 0600);
            case SOCKET -> {
                // sun_path is short: bind under a short name, then move the socket into place.
                Path shortName = tree.resolve("s" + System.nanoTime() % 100000);
                try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                    s.bind(UnixDomainSocketAddress.of(shortName));
                }
                Files.move(shortName, p);
                TestLibc.chmod(p, 0600);
            }
            case DIRECTORY -> tree.dir("auth/" + name, 0600);
            case SYMLINK -> {
                tree.file("auth/target.state", new byte[] {1}, 0600, 0);
                tree.symlink("auth/" + name, leaf.resolve("target.state"), (int) Libc.geteuid());
            }
            case HARDLINK -> {
                tree.file("auth/other.state", new byte[] {1}, 0600, (int) Libc.geteuid());
                Files.createLink(p, leaf.resolve("other.state"));
            }
            case MODE_0644 -> tree.file("auth/" + name, new byte[] {1}, 0644, (int) Libc.geteuid());
            case MODE_0400 -> tree.file("auth/" + name, new byte[] {1}, 0400, (int) Libc.geteuid());
            case OTHER_OWNER -> tree.file("auth/" + name, new byte[] {1}, 0600, ATTACKER_UID);
        }
        return switch (h) {
            case FIFO, SOCKET, DIRECTORY -> TYPE;
            case SYMLINK -> SYMLINK;
            case HARDLINK -> LINKS;
            case MODE_0644, MODE_0400 -> MODE;
            case OTHER_OWNER -> OWNER;
        };
    }

    @ParameterizedTest
    @EnumSource(Hostile.class)
    void hostileRecord_readAndWriteRefusedWithoutBlocking(Hostile h) throws Exception {
        assumeTrue(h != Hostile.OTHER_OWNER || TestTree.isRoot(), "needs root to chown");
        Category expected = plant(h, RECORD);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertRefused(tree, expected, leaf + "/" + RECORD, () -> dir.read(RECORD, 100));
            assertRefused(tree, expected, leaf + "/" + RECORD, () -> dir.writeAtomically(RECORD, new byte[] {2}));
        });
    }

    @ParameterizedTest
    @EnumSource(Hostile.class)
    void hostileLockFile_refusedWithoutBlocking(Hostile h) throws Exception {
        assumeTrue(h != Hostile.OTHER_OWNER || TestTree.isRoot(), "needs root to chown");
        Category expected = plant(h, LOCK);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            for (LockMode mode : LockMode.values()) {
                assertRefused(tree, expected, leaf + "/" + LOCK, () -> dir.lock(LOCK, mode).close());
            }
        });
    }

    // ---- atomic write failure paths -----------------------------------------------------

    /** The steps of the atomic write, in order; everything before {@code RENAME} is before the rename. */
    private static final List<FaultySyscalls.Call> WRITE_STEPS = List.of(FaultySyscalls.Call.CREATE_TEMP,
            FaultySyscalls.Call.FCHMOD_TEMP, FaultySyscalls.Call.WRITE, FaultySyscalls.Call.FSYNC_TEMP,
            FaultySyscalls.Call.CLOSE_TEMP, FaultySyscalls.Call.RENAME, FaultySyscalls.Call.FSYNC_DIR);

    private static boolean beforeRename(FaultySyscalls.Call step) {
        return WRITE_STEPS.indexOf(step) < WRITE_STEPS.indexOf(FaultySyscalls.Call.RENAME);
    }

    @ParameterizedTest
    @EnumSource(value = FaultySyscalls.Call.class,
            names = {"CREATE_TEMP", "FCHMOD_TEMP", "WRITE", "FSYNC_TEMP", "CLOSE_TEMP", "RENAME", "FSYNC_DIR"})
    void writeAtomically_failingStep_saysWhichSideOfTheRename_leavesNoTemporaryAndOldOrNewContent(FaultySyscalls.Call step)
            throws Exception {
        byte[] old = "old".getBytes(StandardCharsets.UTF_8);
        byte[] neu = "new".getBytes(StandardCharsets.UTF_8);
        dir.writeAtomically(RECORD, old);
        FaultySyscalls door = new FaultySyscalls();
        try (SecureDirectory faulty = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, door)) {
            door.fail(step, "EIO");
            var e = Refusals.refusal(() -> faulty.writeAtomically(RECORD, neu));
            assertThat(e.category()).isEqualTo(IO);
            assertThat(e.component()).isEqualTo(leaf + "/" + RECORD);
            assertThat(e.detail()).startsWith(switch (step) {
                case CREATE_TEMP -> "openat: EIO";
                case FCHMOD_TEMP -> "fchmod: EIO";
                case WRITE -> "write: EIO";
                case FSYNC_TEMP, FSYNC_DIR -> "fsync: EIO";
                case CLOSE_TEMP -> "close: EIO";
                default -> "renameat: EIO";
            });
            assertThat(e.nothingWritten()).as("nothingWritten of %s", e.getMessage()).isEqualTo(beforeRename(step));
            assertThat(door.count(FaultySyscalls.Call.RENAME)).isEqualTo(beforeRename(step) ? 0 : 1);
            assertThat(names()).as("no temporary file left").containsExactly(RECORD);
            // The fault was injected before the real call: only the failed directory flush comes after the rename.
            assertThat(dir.read(RECORD, 10)).isEqualTo(step == FaultySyscalls.Call.FSYNC_DIR ? neu : old);
            assertThat(mode(leaf.resolve(RECORD))).isEqualTo(0600);
            if (step == FaultySyscalls.Call.FSYNC_DIR) {
                // A failed flush of the directory is final (DirectoryFlush): no later write here is
                // acknowledged, and the directory says so before any write, until it is opened again.
                assertThat(Refusals.refusal(() -> faulty.writeAtomically(RECORD, neu)).detail()).contains("failed earlier");
                assertThat(Refusals.refusal(faulty::revalidate).detail()).contains("restart the helper");
            } else {
                faulty.writeAtomically(RECORD, neu); // the directory stays usable
            }
            assertThat(dir.read(RECORD, 10)).isEqualTo(neu);
        }
    }

    @Test
    void writeAtomically_renameTookEffectButReportedAnError_isNotNothingWritten_andTheNewContentStays() throws Exception {
        dir.writeAtomically(RECORD, "old".getBytes(StandardCharsets.UTF_8));
        FaultySyscalls door = new FaultySyscalls().fail(FaultySyscalls.Call.RENAME, "EIO", 0, true);
        try (SecureDirectory faulty = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, door)) {
            var e = Refusals.refusal(() -> faulty.writeAtomically(RECORD, "new".getBytes(StandardCharsets.UTF_8)));
            assertThat(e.nothingWritten()).isFalse();
            assertThat(e.detail()).contains("may be in place");
        }
        // Unlinking the temporary name after the failed rename did not touch the renamed file.
        assertThat(names()).containsExactly(RECORD);
        assertThat(dir.read(RECORD, 10)).isEqualTo("new".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void writeAtomically_failureBeforeRenameWhoseCleanUpFailsToo_isStillNothingWritten_andTheTemporaryIsRemovable()
            throws Exception {
        byte[] old = "old".getBytes(StandardCharsets.UTF_8);
        dir.writeAtomically(RECORD, old);
        FaultySyscalls door = new FaultySyscalls().fail(FaultySyscalls.Call.FSYNC_TEMP, "EIO")
                .fail(FaultySyscalls.Call.UNLINK, "EIO");
        try (SecureDirectory faulty = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, door)) {
            var e = Refusals.refusal(() -> faulty.writeAtomically(RECORD, "new".getBytes(StandardCharsets.UTF_8)));
            assertThat(e.nothingWritten()).isTrue();
            assertThat(e.detail()).isEqualTo("fsync: EIO; the temporary file could not be removed");
        }
        List<String> left = names().stream().filter(n -> !n.equals(RECORD)).toList();
        assertThat(left).hasSize(1);
        assertThat(left.get(0)).matches("\\." + java.util.regex.Pattern.quote(RECORD) + "\\.[0-9a-f]{24}\\.tmp");
        assertThat(dir.read(RECORD, 10)).isEqualTo(old);
        assertThat(dir.list()).containsExactly(left.get(0), RECORD);
        assertThat(dir.removeTemporary(left.get(0))).isTrue();
        assertThat(dir.removeTemporary(left.get(0))).isFalse();
        assertThat(names()).containsExactly(RECORD);
    }

    @Test
    void writeAtomically_refusedNameOrDestination_isNothingWritten() throws Exception {
        assertThat(Refusals.refusal(() -> dir.writeAtomically(".x", new byte[1])).nothingWritten()).isTrue();
        assertThat(Refusals.refusal(() -> dir.writeAtomically(LOCK, new byte[1])).nothingWritten()).isTrue();
        dir.writeAtomically(RECORD, new byte[1]);
        TestLibc.chmod(leaf.resolve(RECORD), 0644);
        var e = assertRefused(tree, MODE, leaf + "/" + RECORD, () -> dir.writeAtomically(RECORD, new byte[2]));
        assertThat(e.nothingWritten()).isTrue();
    }

    // ---- locks --------------------------------------------------------------------------

    @Test
    void lock_createdWith0600_andNeverRemoved() throws Exception {
        try (StableLock l = dir.lock(LOCK, LockMode.NON_BLOCKING)) {
            assertThat(l.name()).isEqualTo(LOCK);
            assertThat(l.identity().inode())
                    .isEqualTo(((Number) Files.getAttribute(leaf.resolve(LOCK), "unix:ino")).longValue());
        }
        assertThat(names()).containsExactly(LOCK);
        assertThat(mode(leaf.resolve(LOCK))).isEqualTo(0600);
    }

    @Test
    void lock_secondHolderInSameProcess_isBusyUntilReleased() throws Exception {
        StableLock first = dir.lock(LOCK, LockMode.NON_BLOCKING);
        try (SecureDirectory other = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            assertRefused(tree, BUSY, leaf + "/" + LOCK, () -> dir.lock(LOCK, LockMode.NON_BLOCKING).close());
            assertRefused(tree, BUSY, leaf + "/" + LOCK, () -> other.lock(LOCK, LockMode.NON_BLOCKING).close());
            first.close();
            first.close(); // idempotent
            other.lock(LOCK, LockMode.NON_BLOCKING).close();
        }
    }

    @Test
    void lock_blocking_waitsForRelease() throws Exception {
        StableLock first = dir.lock("identity.lock", LockMode.BLOCKING);
        CompletableFuture<StableLock> second = CompletableFuture.supplyAsync(() -> {
            try {
                return dir.lock("identity.lock", LockMode.BLOCKING);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        FlockWaiters.await(leaf.resolve("identity.lock"));
        assertThat(second).isNotDone();
        first.close();
        second.get(10, TimeUnit.SECONDS).close();
    }

    @Test
    void lock_heldLockSurvivesDirectoryClose() throws Exception {
        StableLock l = dir.lock(LOCK, LockMode.NON_BLOCKING);
        dir.close();
        try (SecureDirectory again = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            assertThat(Refusals.refusal(() -> again.lock(LOCK, LockMode.NON_BLOCKING).close()).category())
                    .isEqualTo(BUSY);
            l.close();
            again.lock(LOCK, LockMode.NON_BLOCKING).close();
        }
    }

    // ---- modes of use -------------------------------------------------------------------

    @Test
    void validateOnly_refusesWritesAndLockCreation() throws Exception {
        try (SecureDirectory ro = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
            assertThatThrownBy(() -> ro.writeAtomically(RECORD, new byte[1])).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> ro.lock(LOCK, LockMode.NON_BLOCKING)).isInstanceOf(IllegalStateException.class);
            assertThat(names()).isEmpty();
        }
    }

    @Test
    void closed_directory_refusesUse() throws Exception {
        dir.close();
        dir.close();
        assertThatThrownBy(() -> dir.read(RECORD, 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> dir.writeAtomically(RECORD, new byte[1])).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(dir::revalidate).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void concurrentWriters_lastWriteWinsAndNothingTorn() throws Exception {
        int threads = 4;
        int rounds = 50;
        List<CompletableFuture<Void>> all = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            byte[] content = String.valueOf(t).repeat(1000).getBytes(StandardCharsets.UTF_8);
            all.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < rounds; i++) {
                    try {
                        dir.writeAtomically(RECORD, content);
                        byte[] seen = dir.read(RECORD, 2000);
                        assertThat(seen).hasSize(1000);
                        assertThat(new String(seen, StandardCharsets.UTF_8).chars().distinct().count()).isEqualTo(1);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(names()).containsExactly(RECORD);
    }
}
