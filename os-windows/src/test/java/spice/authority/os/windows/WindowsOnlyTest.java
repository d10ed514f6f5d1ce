package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * The attack list of os-posix's tests against the real Windows calls: swap races, reparse points,
 * an attacker-writable ancestor, a hard link, a second helper, a killed host.
 *
 * <p>NOT RUN: these tests run only on Windows ({@code @EnabledOnOs(WINDOWS)}); they have never run
 * (no Windows machine or runner has executed this suite yet). They are written against documented
 * behaviour and must be expected to need fixes on their first run.
 */
@EnabledOnOs(OS.WINDOWS)
class WindowsOnlyTest {

    private static final WindowsSecureDirectoryProvider PROVIDER = new WindowsSecureDirectoryProvider();

    private Path base;

    @BeforeEach
    void setUp() throws IOException {
        // %TEMP% is under the profile: owned by the user, inherited DACL of SYSTEM, Administrators, user.
        base = Files.createTempDirectory("spice-authority-test");
    }

    @AfterEach
    void tearDown() throws IOException, InterruptedException {
        new ProcessBuilder("cmd", "/c", "rmdir", "/s", "/q", base.toString()).inheritIO().start().waitFor();
    }

    private static int run(String... cmd) throws IOException, InterruptedException {
        return new ProcessBuilder(cmd).inheritIO().start().waitFor();
    }

    private String auth() {
        return base.resolve("authority").toString();
    }

    @Test
    void bind_createsLeafWithUserOnlyDescriptor_andReopens() throws Exception {
        try (SecureDirectory d = PROVIDER.open(auth(), OpenMode.CREATE_OR_VALIDATE)) {
            assertThat(d.createdLeaf()).isTrue();
            d.writeAtomically("identity.key", new byte[72]);
            assertThat(d.read("identity.key", 72)).hasSize(72);
            assertThat(d.list()).containsExactly("identity.key");
        }
        try (SecureDirectory d = PROVIDER.open(auth(), OpenMode.VALIDATE_ONLY)) {
            assertThat(d.createdLeaf()).isFalse();
            d.revalidate();
        }
    }

    /** Swap race: the bound directory is renamed away and replaced; the handle keeps working on it. */
    @Test
    void swapAfterBind_revalidateRefused_operationsStayOnTheBoundDirectory() throws Exception {
        try (SecureDirectory d = PROVIDER.open(auth(), OpenMode.CREATE_OR_VALIDATE)) {
            Path moved = base.resolve("moved");
            Files.move(Path.of(auth()), moved);
            Files.createDirectory(Path.of(auth()));
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, d::revalidate);
            assertThat(e.category()).isIn(Category.IDENTITY, Category.MODE);
            d.writeAtomically("run-a.state", new byte[] {1});
            assertThat(Files.exists(moved.resolve("run-a.state"))).isTrue();
            assertThat(Files.exists(Path.of(auth(), "run-a.state"))).isFalse();
        }
    }

    @Test
    void junctionOnThePath_refused() throws Exception {
        Path target = Files.createDirectory(base.resolve("target"));
        assertThat(run("cmd", "/c", "mklink", "/J", base.resolve("link").toString(), target.toString())).isZero();
        DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                () -> PROVIDER.open(base.resolve("link").resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE));
        assertThat(e.category()).isEqualTo(Category.SYMLINK);
        assertThat(Files.exists(target.resolve("authority"))).isFalse();
    }

    /** Users granted DELETE on an ancestor could move it away and put another in its place. */
    @Test
    void attackerWritableAncestor_refused() throws Exception {
        Path shared = Files.createDirectory(base.resolve("shared"));
        assertThat(run("icacls", shared.toString(), "/grant", "*S-1-5-32-545:(D,DC)")).isZero();
        DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                () -> PROVIDER.open(shared.resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE));
        assertThat(e.category()).isEqualTo(Category.PERMS);
        assertThat(e.component()).isEqualTo(shared.toString());
        assertThat(e.detail()).startsWith("W-ANCESTOR-WRITER");
        assertThat(Files.exists(shared.resolve("authority"))).isFalse();
    }

    @Test
    void leafWithInheritedDacl_refused() throws Exception {
        Files.createDirectory(Path.of(auth())); // created by Java: inherits the parent's DACL
        DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                () -> PROVIDER.open(auth(), OpenMode.VALIDATE_ONLY));
        assertThat(e.category()).isEqualTo(Category.MODE);
    }

    @Test
    void hardLinkedFile_refused() throws Exception {
        try (SecureDirectory d = PROVIDER.open(auth(), OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("identity.key", new byte[72]);
            Files.createLink(base.resolve("stolen.key"), Path.of(auth(), "identity.key"));
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("identity.key", 72))
                    .category()).isEqualTo(Category.LINKS);
        }
    }

    /** A second helper on the same directory: its run lock is busy while the first holds it. */
    @Test
    void secondHelper_lockBusy() throws Exception {
        try (SecureDirectory first = PROVIDER.open(auth(), OpenMode.CREATE_OR_VALIDATE);
             SecureDirectory second = PROVIDER.open(auth(), OpenMode.CREATE_OR_VALIDATE);
             StableLock held = first.lock("identity.lock", LockMode.NON_BLOCKING)) {
            assertThat(held.identity()).isNotNull();
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class,
                    () -> second.lock("identity.lock", LockMode.NON_BLOCKING));
            assertThat(e.category()).isEqualTo(Category.BUSY);
        }
    }

    /** A killed host: the watch fires promptly, and the pid with another start time is not the host. */
    @Test
    void killedHost_watchFires() throws Exception {
        Process p = new ProcessBuilder("ping", "-n", "60", "127.0.0.1").start();
        ProcessWatcher w = PROVIDER.processWatcher();
        long start = w.startTime(p.pid()).orElseThrow();
        assertThat(w.liveness(p.pid(), start)).isEqualTo(ProcessWatcher.Liveness.ALIVE);
        assertThat(w.liveness(p.pid(), start + 1)).isEqualTo(ProcessWatcher.Liveness.DEAD);
        CountDownLatch fired = new CountDownLatch(1);
        try (ProcessWatcher.Watch watch = w.watch(p.pid(), start, fired::countDown)) {
            p.destroyForcibly();
            assertThat(fired.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(watch.liveness()).isEqualTo(ProcessWatcher.Liveness.DEAD);
        }
        assertThat(w.liveness(p.pid(), start)).isEqualTo(ProcessWatcher.Liveness.DEAD);
    }

    @Test
    void defaultDirectory_underLocalAppData() {
        assertThat(PROVIDER.defaultDirectory()).endsWith("\\spice-agent\\authority")
                .startsWith(System.getenv("LOCALAPPDATA"));
    }

    /** The client end of a loopback connection made by this process: its owner is this process. */
    @Test
    void tcpPeer_ownLoopbackConnection_isThisProcess() throws Exception {
        assertThat(PROVIDER.identifiesTcpPeers()).isTrue();
        for (String host : new String[] {"127.0.0.1", "::1"}) {
            java.net.InetAddress a = java.net.InetAddress.ofLiteral(host);
            try (java.net.ServerSocket server = new java.net.ServerSocket(0, 1, a);
                 java.net.Socket client = new java.net.Socket(a, server.getLocalPort());
                 java.net.Socket accepted = server.accept()) {
                long pid = PROVIDER.tcpPeerPid((java.net.InetSocketAddress) accepted.getRemoteSocketAddress(),
                        (java.net.InetSocketAddress) accepted.getLocalSocketAddress());
                assertThat(pid).as(host).isEqualTo(ProcessHandle.current().pid());
                // the mirror direction is the helper's own accepted socket, never the client's row
                long mirror = PROVIDER.tcpPeerPid((java.net.InetSocketAddress) client.getRemoteSocketAddress(),
                        (java.net.InetSocketAddress) client.getLocalSocketAddress());
                assertThat(mirror).isEqualTo(ProcessHandle.current().pid());
            }
        }
    }

    /** A connection that does not exist has no owner: refused, not guessed. */
    @Test
    void tcpPeer_noSuchConnection_refused() throws Exception {
        java.net.InetSocketAddress nobody = new java.net.InetSocketAddress(java.net.InetAddress.ofLiteral("127.0.0.1"), 1);
        IOException e = catchThrowableOfType(IOException.class, () -> PROVIDER.tcpPeerPid(nobody, nobody));
        assertThat(e).hasMessageContaining("no connection in the TCP table");
    }

    @Test
    void isOwnUser_selfYes_systemNo() throws Exception {
        ProcessWatcher w = PROVIDER.processWatcher();
        assertThat(w.isOwnUser(ProcessHandle.current().pid())).isTrue();
        // pid 4 (System) cannot be opened with limited rights by a user, or runs as SYSTEM
        try {
            assertThat(w.isOwnUser(4)).isFalse();
        } catch (spice.authority.os.ProcessWatchException unknown) {
            // unknown is refused by the caller: also never "same user"
        }
    }
}
