package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static spice.authority.os.windows.SdBuilder.FULL;
import static spice.authority.os.windows.SdBuilder.OTHER_USER;
import static spice.authority.os.windows.SdBuilder.USER;
import static spice.authority.os.windows.SdBuilder.USERS;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.StableLock;

/**
 * The module's own logic over {@link FakeWindows}, a fake door: which component each rule is
 * applied to, that a refusal creates nothing, the write protocol's order and its two sides of the
 * rename, lock and watch behaviour. This runs on Linux; it proves the Java above the door, not the
 * Windows calls below it.
 */
class FakeDoorTest {

    private static final String AUTH = "C:\\Users\\me\\AppData\\spice-agent\\authority";

    private FakeWindows fake;
    private FakeWindows.Node profile;

    @BeforeEach
    void setUp() {
        fake = new FakeWindows(USER);
        profile = fake.profile();
    }

    private WindowsSecureDirectory open(String path, OpenMode mode) throws DirectoryRefusedException {
        return WindowsSecureDirectory.open(path, mode, fake, fake.user);
    }

    private DirectoryRefusedException refusedOpen(String path, OpenMode mode, Category category, String component) {
        String before = fake.snapshot();
        DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, () -> open(path, mode).close());
        assertThat(e).as("open must be refused").isNotNull();
        assertThat(e.category()).as(e.getMessage()).isEqualTo(category);
        assertThat(e.component()).as(e.getMessage()).isEqualTo(component);
        assertThat(fake.snapshot()).as("nothing changed").isEqualTo(before);
        assertThat(fake.openHandles()).as("no handle leaked").isZero();
        return e;
    }

    @Test
    void open_createsMissingComponentsWithUserOnlyDescriptor() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            assertThat(d.createdLeaf()).isTrue();
            FakeWindows.Node leaf = profile.child("AppData").child("spice-agent").child("authority");
            assertThat(leaf.sd).isEqualTo(SecurityDescriptor.userOnly(fake.user));
            assertThat(profile.child("AppData").sd).isEqualTo(SecurityDescriptor.userOnly(fake.user));
            assertThat(d.identity().inode()).isEqualTo(FileIds.le64(leaf.id, 8));
        }
        assertThat(fake.openHandles()).isZero();
        try (WindowsSecureDirectory again = open(AUTH, OpenMode.VALIDATE_ONLY)) {
            assertThat(again.createdLeaf()).isFalse();
        }
    }

    @Test
    void validateOnly_missing_createsNothing() {
        refusedOpen(AUTH, OpenMode.VALIDATE_ONLY, Category.MISSING, "C:\\Users\\me\\AppData");
    }

    @Test
    void untrustedWriterOnAncestor_refusedNamingIt() {
        fake.root.child("Users").sd = SdBuilder.ancestor().allow(0, 0x00010000, USERS).build();
        DirectoryRefusedException e = refusedOpen(AUTH, OpenMode.CREATE_OR_VALIDATE, Category.PERMS, "C:\\Users");
        assertThat(e.detail()).startsWith("W-ANCESTOR-WRITER: ACE 3 grants DELETE to S-1-5-32-545");
    }

    @Test
    void nullDaclOnVolumeRoot_refused() {
        fake.root.sd = SdBuilder.ancestor().owner(SdBuilder.SYSTEM).nullDacl().build();
        DirectoryRefusedException e = refusedOpen(AUTH, OpenMode.CREATE_OR_VALIDATE, Category.PERMS, "C:\\");
        assertThat(e.detail()).startsWith("W-DACL-NULL");
    }

    @Test
    void reparsePointOnTheWay_refused() {
        FakeWindows.Node link = profile.mkdir("AppData", SdBuilder.ancestor().owner(USER).build());
        link.reparseTag = 0xA000000C; // IO_REPARSE_TAG_SYMLINK
        DirectoryRefusedException e = refusedOpen(AUTH, OpenMode.CREATE_OR_VALIDATE, Category.SYMLINK,
                "C:\\Users\\me\\AppData");
        assertThat(e.detail()).startsWith("W-REPARSE: is a reparse point (tag 0xA000000C)");
    }

    @Test
    void fileWhereDirectoryMustBe_refused() {
        profile.file("AppData", SdBuilder.leaf().build(), new byte[0]);
        refusedOpen(AUTH, OpenMode.CREATE_OR_VALIDATE, Category.TYPE, "C:\\Users\\me\\AppData");
    }

    @Test
    void leafOwnedByAnotherUser_refused() {
        profile.mkdir("AppData", SdBuilder.leaf().build()).mkdir("spice-agent", SdBuilder.leaf().build())
                .mkdir("authority", SdBuilder.leaf().owner(OTHER_USER).build());
        DirectoryRefusedException e = refusedOpen(AUTH, OpenMode.CREATE_OR_VALIDATE, Category.OWNER, AUTH);
        assertThat(e.detail()).startsWith("W-OWNER-NOT-USER");
    }

    @Test
    void leafWithInheritedDacl_refused() {
        profile.mkdir("AppData", SdBuilder.leaf().build()).mkdir("spice-agent", SdBuilder.leaf().build())
                .mkdir("authority", new SdBuilder().owner(USER).allow(SdBuilder.ID, FULL, USER).build());
        DirectoryRefusedException e = refusedOpen(AUTH, OpenMode.VALIDATE_ONLY, Category.MODE, AUTH);
        assertThat(e.detail()).startsWith("W-LEAF-UNPROTECTED");
    }

    @Test
    void zeroFileId_refused() {
        profile.mkdir("AppData", SdBuilder.leaf().build()).mkdir("spice-agent", SdBuilder.leaf().build())
                .mkdir("authority", SdBuilder.leaf().build()).id = new byte[24];
        DirectoryRefusedException e = refusedOpen(AUTH, OpenMode.VALIDATE_ONLY, Category.IDENTITY, AUTH);
        assertThat(e.detail()).startsWith("W-ID-ZERO");
    }

    /** A ReFS leaf whose 128-bit id differs from its replacement's only in the high half. */
    @Test
    void wideFileId_bound_andAReplacementDifferingOnlyInTheHighHalf_refused() throws Exception {
        FakeWindows.Node parent = profile.mkdir("AppData", SdBuilder.leaf().build()).mkdir("spice-agent", SdBuilder.leaf().build());
        FakeWindows.Node leaf = parent.mkdir("authority", SdBuilder.leaf().build());
        leaf.id = java.nio.ByteBuffer.allocate(24).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(0x5eed).putLong(77).putLong(1).array();
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.VALIDATE_ONLY)) {
            assertThat(d.identity()).isEqualTo(new spice.authority.os.FileIdentity(0x5eed, 77, 1));
            d.revalidate();
            parent.children.remove("AUTHORITY");
            FakeWindows.Node twin = parent.mkdir("authority", SdBuilder.leaf().build());
            twin.id = java.nio.ByteBuffer.allocate(24).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(0x5eed).putLong(77).putLong(2).array();
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, d::revalidate);
            assertThat(e).as("same low half, other high half: another directory").isNotNull();
            assertThat(e.category()).isEqualTo(Category.IDENTITY);
        }
    }

    @Test
    void networkDrive_refused() {
        fake.driveType = 4; // DRIVE_REMOTE
        refusedOpen(AUTH, OpenMode.CREATE_OR_VALIDATE, Category.TYPE, "C:\\");
    }

    @Test
    void revalidate_afterTheLeafWasReplaced_refusedButHandleStillUsed() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            d.revalidate();
            FakeWindows.Node parent = profile.child("AppData").child("spice-agent");
            FakeWindows.Node bound = parent.child("authority");
            parent.children.remove("AUTHORITY");
            bound.name = "moved";
            parent.children.put("MOVED", bound);
            parent.mkdir("authority", SecurityDescriptor.userOnly(fake.user));
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, d::revalidate);
            assertThat(e.category()).isEqualTo(Category.IDENTITY);
            d.writeAtomically("identity.key", new byte[] {1, 2, 3});
            assertThat(bound.child("identity.key").content).containsExactly(1, 2, 3);
            assertThat(parent.child("authority").children).isEmpty();
        }
    }

    @Test
    void writeAtomically_createFlushRenameFlush_inThatOrder() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            fake.log.clear();
            d.writeAtomically("run-a.state", "hello".getBytes(StandardCharsets.UTF_8));
            assertThat(fake.log).hasSize(6);
            assertThat(fake.log.get(0)).isEqualTo("NtCreateFile run-a.state"); // destination check
            assertThat(fake.log.get(1)).matches("NtCreateFile \\.run-a\\.state\\.[0-9a-f]{24}\\.tmp CREATE");
            assertThat(fake.log.subList(2, 6)).containsExactly("WriteFile", "FlushFileBuffers", "Rename run-a.state",
                    "FlushFileBuffers");
            assertThat(d.read("run-a.state", 100)).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
            assertThat(d.list()).containsExactly("run-a.state");
            assertThat(d.checkFile("run-a.state")).isNotNull();
        }
        assertThat(fake.openHandles()).isZero();
    }

    @Test
    void writeAtomically_failureBeforeRename_nothingWrittenAndTempDeleted() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("run-a.state", new byte[] {1});
            fake.failures.put("FlushFileBuffers", x -> true);
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                    () -> d.writeAtomically("run-a.state", new byte[] {2}));
            assertThat(e.nothingWritten()).isTrue();
            fake.failures.clear();
            assertThat(d.read("run-a.state", 10)).containsExactly(1);
            assertThat(d.list()).containsExactly("run-a.state");
        }
    }

    @Test
    void probeWrite_createFlushDelete_leavesNothing_aFailedFlushIsRefused() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("identity.key", new byte[] {1});
            fake.log.clear();
            d.probeWrite("identity.key");
            assertThat(fake.log).hasSize(3);
            assertThat(fake.log.get(0)).matches("NtCreateFile \\.identity\\.key\\.[0-9a-f]{24}\\.tmp CREATE");
            assertThat(fake.log.subList(1, 3)).containsExactly("FlushFileBuffers", "Delete " + fake.log.get(0)
                    .substring("NtCreateFile ".length(), fake.log.get(0).length() - " CREATE".length()));
            assertThat(d.list()).containsExactly("identity.key");

            fake.failures.put("FlushFileBuffers", x -> true);
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                    () -> d.probeWrite("identity.key"));
            assertThat(e.category()).isEqualTo(Category.IO);
            assertThat(e.detail()).startsWith("a write probe failed: FlushFileBuffers");
            fake.failures.clear();
            assertThat(d.list()).containsExactly("identity.key");
            assertThat(d.read("identity.key", 10)).containsExactly(1);
        }
        assertThat(fake.openHandles()).isZero();
    }

    /** The reference's bug (d.8): a failure after the rename must never delete the new target by handle. */
    @Test
    void writeAtomically_renameTookEffectButFailed_uncertainAndTargetKept() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("run-a.state", new byte[] {1});
            fake.renameSucceedsThenFails = true;
            fake.failures.put("Rename", x -> true);
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                    () -> d.writeAtomically("run-a.state", new byte[] {2}));
            assertThat(e.nothingWritten()).isFalse();
            assertThat(e.detail()).contains("may be in place");
            fake.failures.clear();
            assertThat(d.read("run-a.state", 10)).containsExactly(2);
            assertThat(fake.log).noneMatch(s -> s.equals("Delete run-a.state"));
        }
    }

    @Test
    void fileRule_linksReparseUntrustedDirectory_refused() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            FakeWindows.Node leaf = profile.child("AppData").child("spice-agent").child("authority");
            leaf.file("a.key", SdBuilder.leaf().build(), new byte[] {1}).links = 2;
            leaf.file("b.key", SdBuilder.leaf().build(), new byte[] {1}).reparseTag = 0xA0000003;
            leaf.file("c.key", SdBuilder.leaf().allow(0, 0x1, OTHER_USER).build(), new byte[] {1});
            leaf.mkdir("d.key", SdBuilder.leaf().build());
            leaf.file("e.key", SdBuilder.leaf().owner(OTHER_USER).build(), new byte[] {1});
            String before = fake.snapshot();
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("a.key", 10)).category())
                    .isEqualTo(Category.LINKS);
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("b.key", 10)).category())
                    .isEqualTo(Category.SYMLINK);
            DirectoryRefusedException c = catchThrowableOfType(DirectoryRefusedException.class, () -> d.checkFile("c.key"));
            assertThat(c.category()).isEqualTo(Category.MODE);
            assertThat(c.detail()).startsWith("W-LEAF-UNTRUSTED");
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("d.key", 10)).category())
                    .isEqualTo(Category.TYPE);
            assertThat(catchThrowableOfType(DirectoryRefusedException.class,
                    () -> d.writeAtomically("e.key", new byte[] {9})).category()).isEqualTo(Category.OWNER);
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("zz.key", 10)).category())
                    .isEqualTo(Category.MISSING);
            assertThat(fake.snapshot()).isEqualTo(before);
        }
        assertThat(fake.openHandles()).isZero();
    }

    @Test
    void readLargerThanLimit_refused() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("run-a.state", new byte[11]);
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("run-a.state", 10)).category())
                    .isEqualTo(Category.SIZE);
            assertThat(d.read("run-a.state", 11)).hasSize(11);
        }
    }

    @Test
    void lock_secondHolderBusy_untilReleased() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            StableLock first = d.lock("run-a.lock", LockMode.NON_BLOCKING);
            FakeWindows.Node file = profile.child("AppData").child("spice-agent").child("authority").child("run-a.lock");
            assertThat(file.sd).isEqualTo(SecurityDescriptor.userOnly(fake.user));
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                    () -> d.lock("run-a.lock", LockMode.NON_BLOCKING));
            assertThat(e.category()).isEqualTo(Category.BUSY);
            first.close();
            d.lock("run-a.lock", LockMode.NON_BLOCKING).close();
            assertThatThrownBy(() -> d.writeAtomically("run-a.lock", new byte[1]))
                    .isInstanceOf(DirectoryRefusedException.class);
        }
        assertThat(fake.openHandles()).isZero();
    }

    @Test
    void removeTemporary_onlyTemporaryNamesOfTheUser() throws Exception {
        try (WindowsSecureDirectory d = open(AUTH, OpenMode.CREATE_OR_VALIDATE)) {
            FakeWindows.Node leaf = profile.child("AppData").child("spice-agent").child("authority");
            String temp = ".run-a.state.0123456789abcdef01234567.tmp";
            leaf.file(temp, SdBuilder.leaf().build(), new byte[] {1});
            assertThat(d.removeTemporary(temp)).isTrue();
            assertThat(d.removeTemporary(temp)).isFalse();
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.removeTemporary("run-a.state"))
                    .category()).isEqualTo(Category.NAME);
            String other = ".run-b.state.0123456789abcdef01234567.tmp";
            leaf.file(other, SdBuilder.leaf().owner(OTHER_USER).build(), new byte[] {1});
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.removeTemporary(other))
                    .category()).isEqualTo(Category.OWNER);
            assertThat(d.list()).containsExactly(other);
        }
    }

    @Test
    void processWatch_startTimeReuseAndExit() throws Exception {
        WindowsProcessWatcher w = new WindowsProcessWatcher(fake);
        fake.spawn(42, 1000);
        assertThat(w.startTime(42)).hasValue(1000);
        assertThat(w.liveness(42, 1000)).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(w.liveness(42, 999)).as("pid reused").isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(w.liveness(43, 1000)).isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(w.liveness(-1, 1000)).isEqualTo(ProcessWatcher.Liveness.DEAD);
        fake.failures.put("OpenProcess", pid -> pid.equals("44"));
        fake.spawn(44, 1);
        assertThat(w.liveness(44, 1)).as("unknown is not dead").isEqualTo(ProcessWatcher.Liveness.UNKNOWN);

        CountDownLatch fired = new CountDownLatch(1);
        ProcessWatcher.Watch watch = w.watch(42, 1000, fired::countDown);
        assertThat(watch.liveness()).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        awaitWatchWaiting(42); // it saw the process unsignalled
        assertThat(fired.getCount()).isOne();
        fake.exit(42);
        assertThat(fired.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(watch.liveness()).isEqualTo(ProcessWatcher.Liveness.DEAD);
        assertThat(w.startTime(42)).isEmpty();
        watch.close();

        CountDownLatch reused = new CountDownLatch(1);
        w.watch(42, 7, reused::countDown);
        assertThat(reused.await(5, TimeUnit.SECONDS)).as("another start time fires at once").isTrue();
    }

    /** The thread of the watch of {@code pid} (WindowsProcessWatcher names it so), or null once it ended. */
    private static Thread watchThread(long pid) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("spice-process-watch-" + pid)).findFirst().orElse(null);
    }

    /** Returns once the watch of {@code pid} waits in the fake's WaitForMultipleObjects. */
    private static void awaitWatchWaiting(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            Thread t = watchThread(pid);
            if (t != null && t.getState() == Thread.State.TIMED_WAITING
                    && java.util.Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getMethodName().equals("waitForAny"))) {
                return;
            }
            assertThat(System.nanoTime()).as("the watch of pid %d never waited", pid).isLessThan(deadline);
            Thread.sleep(1); // the poll interval of a wait with a deadline
        }
    }

    @Test
    void processWatch_closedWatchNeverFires() throws Exception {
        WindowsProcessWatcher w = new WindowsProcessWatcher(fake);
        fake.spawn(7, 5);
        CountDownLatch fired = new CountDownLatch(1);
        ProcessWatcher.Watch watch = w.watch(7, 5, fired::countDown);
        watch.close();
        fake.exit(7);
        Thread waiter = watchThread(7);
        assertThat(waiter == null || waiter.join(Duration.ofSeconds(5))).as("the watch's thread ended").isTrue();
        assertThat(fired.getCount()).isOne();
        assertThat(watch.liveness()).isEqualTo(ProcessWatcher.Liveness.UNKNOWN);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (fake.openWaitables() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(10); // the poll interval of a wait with a deadline
        }
        assertThat(fake.openWaitables()).as("the watch released its handles").isZero();
    }

    @Test
    void provider_inertOffWindows() {
        assertThat(WindowsSecureDirectoryProvider.supported("Linux", "amd64")).isFalse();
        assertThat(WindowsSecureDirectoryProvider.supported("Windows 11", "amd64")).isTrue();
        assertThat(WindowsSecureDirectoryProvider.supported("Windows 11", "aarch64")).isTrue();
        assertThat(WindowsSecureDirectoryProvider.supported("Windows 10", "x86")).isFalse();
        assertThat(WindowsSecureDirectoryProvider.platform("Windows 11", "amd64")).isEqualTo("windows-x86_64");
        assertThat(new WindowsSecureDirectoryProvider().isSupported())
                .isEqualTo(System.getProperty("os.name").startsWith("Windows"));
        assertThat(List.of(new WindowsSecureDirectoryProvider().platform())).isNotEmpty();
    }
}
