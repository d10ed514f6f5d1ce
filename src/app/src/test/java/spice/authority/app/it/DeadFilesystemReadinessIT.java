package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Readiness on a dead file system, with real kernel faults under a real serving helper: the
 * authority directory sits on its own ext4 on a loop device, and each test breaks that file system
 * while the helper serves, then polls {@code /q/health/ready} with a deadline.
 *
 * <ul>
 *   <li>an ext4 shutdown ({@code EXT4_IOC_SHUTDOWN}, {@code EXT4_GOING_FLAGS_NOLOGFLUSH}): DOWN;
 *       permanent until the file system is unmounted;
 *   <li>the kernel's emergency read-only remount of that one file system (mounted
 *       {@code errors=remount-ro}, an error raised through its {@code trigger_fs_error}): DOWN;
 *       the kernel refuses {@code remount,rw} until it is unmounted. A plain
 *       {@code mount -o remount,ro} cannot reach a serving helper: the kernel refuses it while the
 *       helper holds its lock file open for writing;
 *   <li>a device that refuses writes (the loop device's backing file made immutable on the ext4
 *       that holds it: every write to the device fails, reads succeed): DOWN; ext4 aborts its
 *       journal at the first failed commit, so this too lasts until the file system is unmounted;
 *   <li>a frozen file system ({@code fsfreeze}: writes block): DOWN while frozen, UP again after
 *       the thaw, without a restart.
 * </ul>
 *
 * <p>Before each fault the kernel still answers the status calls and the listing from its caches,
 * which is all the store check used to make, so readiness stayed UP. Needs root and loop devices
 * (skipped otherwise, saying which), and {@code losetup}, {@code mkfs.ext4}, {@code chattr},
 * {@code fsfreeze} and {@code python3}, which machines of this kind have. Everything it mounts,
 * attaches or creates is removed afterwards, also when a test fails.
 */
class DeadFilesystemReadinessIT {
    /** How long a fault may take to turn readiness DOWN (the store check's answer lives 2 s). */
    private static final long DOWN_WITHIN_MS = 10_000;
    private static final long UP_WITHIN_MS = 10_000;

    private Path root;
    private Path store;
    private Path innerImage;
    private String innerLoop;
    private final List<Runnable> undo = new ArrayList<>();
    private HelperProcess helper;
    private byte[] identityKey;

    @BeforeAll
    static void needsRootAndLoopDevices() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs Linux (/proc)");
        assumeTrue(uid() == 0, "needs root: it mounts file systems on loop devices");
        assumeTrue(Files.exists(Path.of("/dev/loop-control")), "needs loop device support (/dev/loop-control)");
    }

    private static long uid() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("Uid:")) {
                return Long.parseLong(line.substring(4).trim().split("\\s+")[1]); // the effective uid
            }
        }
        throw new IOException("no Uid line in /proc/self/status");
    }

    /**
     * An ext4 of its own for the authority directory, on a loop device whose backing file lives on
     * a second ext4 (also on a loop device), so that the backing file can be made immutable
     * whatever file system the temporary directory is on.
     */
    @BeforeEach
    void mountStore() throws Exception {
        root = Files.createTempDirectory("spice-deadfs-");
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx------"));
        undo.add(() -> quietly(() -> HelperProcess.deleteTree(root)));
        Path outer = Files.createDirectory(root.resolve("outer"));
        String outerLoop = mountExt4(root.resolve("outer.img"), 96, outer, "defaults");
        assertThat(outerLoop).startsWith("/dev/loop");
        innerImage = outer.resolve("inner.img");
        store = Files.createDirectory(root.resolve("store"));
        innerLoop = mountExt4(innerImage, 32, store, "errors=remount-ro");
        undo.add(0, () -> quietly(() -> sh("chattr", "-i", innerImage.toString()))); // before its removal
    }

    /** Creates, formats, attaches and mounts an image; registers the undoing of each step. */
    private String mountExt4(Path image, int megabytes, Path mountPoint, String options) throws Exception {
        sh("truncate", "-s", megabytes + "M", image.toString());
        sh("mkfs.ext4", "-q", "-F", image.toString());
        String loop = sh("losetup", "--find", "--show", image.toString()).strip();
        undo.add(0, () -> quietly(() -> sh("losetup", "--detach", loop)));
        sh("mount", "-t", "ext4", "-o", options, loop, mountPoint.toString());
        undo.add(0, () -> quietly(() -> unmount(mountPoint)));
        return loop;
    }

    /** Unmounts; when something still holds it (a helper that would not stop), detaches it lazily. */
    private static void unmount(Path mountPoint) throws Exception {
        Process p = new ProcessBuilder("umount", mountPoint.toString()).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            sh("umount", "--lazy", mountPoint.toString());
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        try {
            if (helper != null) {
                helper.close();
            }
        } finally {
            // The helper first (it holds the store open), then the mounts, loops and files in reverse order.
            for (Runnable r : undo) {
                r.run();
            }
            undo.clear();
        }
    }

    private void startHelper() throws Exception {
        helper = HelperProcess.start(store.resolve("authority"), root.resolve("endpoint/authority.sock"));
        awaitReady(200, "before the fault", UP_WITHIN_MS);
        identityKey = Files.readAllBytes(store.resolve("authority/identity.key")); // while it still reads
    }

    @Test
    void ext4Shutdown_readinessDownWithTheReason() throws Exception {
        startHelper();
        // EXT4_IOC_SHUTDOWN = _IOR('X', 125, __u32), flag EXT4_GOING_FLAGS_NOLOGFLUSH (2).
        python("import fcntl, os, struct, sys\n"
                + "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
                + "fcntl.ioctl(fd, 0x8004587D, struct.pack('I', 2))\n", store.toString());
        String body = awaitReady(503, "after EXT4_IOC_SHUTDOWN", DOWN_WITHIN_MS);
        assertThat(storeReason(body)).contains("EIO");
        assertNoSecret(body);
    }

    @Test
    void emergencyReadOnlyRemount_readinessDownWithTheReason() throws Exception {
        startHelper();
        // A plain read-only remount is refused while the helper serves: it holds its lock open for writing.
        Process plain = new ProcessBuilder("mount", "-o", "remount,ro", store.toString()).redirectErrorStream(true).start();
        String said = new String(plain.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(plain.waitFor()).as(said).isNotZero();
        assertThat(said).contains("busy");

        // The kernel's own remount after an error (errors=remount-ro) is not refused.
        Files.writeString(Path.of("/sys/fs/ext4", Path.of(innerLoop).getFileName().toString(), "trigger_fs_error"), "spice-test\n");
        String body = awaitReady(503, "after the emergency read-only remount", DOWN_WITHIN_MS);
        assertThat(storeReason(body)).contains("EROFS");
        assertNoSecret(body);
        // Until it is unmounted: the kernel refuses to make it writable again (its journal is aborted).
        Process rw = new ProcessBuilder("mount", "-o", "remount,rw", store.toString()).redirectErrorStream(true).start();
        rw.getInputStream().readAllBytes();
        assertThat(rw.waitFor()).isNotZero();
    }

    @Test
    void deviceRefusingWrites_readinessDownWithTheReason() throws Exception {
        startHelper();
        // Every write to the loop device now fails (EPERM from the immutable backing file, EIO to ext4); reads succeed.
        sh("chattr", "+i", innerImage.toString());
        String body = awaitReady(503, "after the device began refusing writes", DOWN_WITHIN_MS);
        assertThat(storeReason(body)).containsAnyOf("EIO", "EROFS");
        assertNoSecret(body);
    }

    @Test
    void frozenFilesystem_readinessDownWhileFrozen_upAgainAfterTheThaw() throws Exception {
        startHelper();
        sh("fsfreeze", "--freeze", store.toString());
        Runnable thaw = () -> quietly(() -> sh("fsfreeze", "--unfreeze", store.toString()));
        undo.add(0, thaw); // before the unmount, should the test fail while frozen
        String body = awaitReady(503, "while frozen", DOWN_WITHIN_MS);
        assertThat(storeReason(body)).contains("did not finish");
        sh("fsfreeze", "--unfreeze", store.toString());
        undo.remove(thaw);
        awaitReady(200, "after the thaw", UP_WITHIN_MS);
    }

    /**
     * Polls readiness until it answers {@code status}, at most {@code withinMs}; prints how long
     * that took.
     *
     * @return the body of that answer
     */
    private String awaitReady(int status, String when, long withinMs) throws Exception {
        long t0 = System.nanoTime();
        UnixHttp.Response last = Poll.until(java.time.Duration.ofMillis(withinMs), java.time.Duration.ofMillis(50),
                () -> helper.http().get("/q/health/ready"), r -> r.status() == status);
        if (last.status() == status) {
            System.out.printf("DeadFilesystemReadinessIT: %s: readiness %d after %d ms%s%n", when, status,
                    (System.nanoTime() - t0) / 1_000_000, status == 200 ? "" : ": " + storeReason(last.text()));
            return last.text();
        }
        throw new AssertionError("readiness did not answer " + status + " " + when + " within " + withinMs + " ms; last: "
                + (last == null ? "none" : last.status() + " " + last.text()) + "\nhelper log:\n" + helper.stderr());
    }

    /** The store check's reason in a readiness body. */
    private static String storeReason(String body) {
        int store = body.indexOf("{\"name\":\"store\"");
        assertThat(store).as(body).isNotNegative();
        String check = body.substring(store, body.indexOf('}', body.indexOf("\"data\"", store)) + 1);
        assertThat(check).as(body).contains("\"status\":\"DOWN\"").contains("\"reason\":");
        return check;
    }

    /** The identity file's content, in any usual rendering, is in no readiness body. */
    private void assertNoSecret(String body) {
        byte[] key = identityKey;
        assertThat(key).isNotEmpty();
        assertThat(body).doesNotContain(HexFormat.of().formatHex(key)).doesNotContain(Base64.getEncoder().encodeToString(key))
                .doesNotContain(new String(key, StandardCharsets.ISO_8859_1));
        assertThat(body).doesNotContainPattern("[0-9a-f]{64}");
    }

    private static void python(String script, String arg) throws Exception {
        sh("python3", "-c", script, arg);
    }

    /** Runs a command; its output, or an exception with it when it fails. */
    private static String sh(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }

    @FunctionalInterface
    private interface Step {
        void run() throws Exception;
    }

    private static void quietly(Step step) {
        try {
            step.run();
        } catch (Exception e) {
            System.err.println("DeadFilesystemReadinessIT: clean-up step failed: " + e.getMessage());
        }
    }
}
