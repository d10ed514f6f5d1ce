package spice.authority.app.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;
import spice.authority.os.StableLock;
import spice.authority.app.runtime.BearerToken;

/**
 * {@link Prepared#cleanUpOnce}, the exit handler's release of the endpoint file and the
 * endpoint and instance locks: it releases them, and only once. A second call, made after a newer
 * helper took the same endpoint (its locks and a socket or token file at the same path), leaves
 * the newer helper's file and locks alone.
 *
 * <p>Not covered here: that {@code serve} calls it only from the exit handler, after Quarkus has
 * closed the listener (that needs a running helper: the end-to-end ITs check that the socket is
 * gone after SIGTERM).
 */
class ServeCleanUpTest {
    @TempDir
    Path tmp;

    private SecureDirectoryProvider provider;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeEach
    void setUp() {
        provider = SecureDirectories.provider();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
    }

    @Test
    void unixEndpoint_socketRemoved_locksReleased_authorityClosed() throws Exception {
        Path sock = tmp.resolve("endpoint/authority.sock");
        Prepared ctx = helper(new Endpoint.Unix(sock.toString()), null);
        closedListenerAt(sock);
        assertThat(lockBusy("authority", ServeCommand.INSTANCE_LOCK)).isTrue();
        assertThat(lockBusy("endpoint", ServeCommand.ENDPOINT_LOCK)).isTrue();

        ctx.cleanUpOnce().run();

        assertThat(sock).doesNotExist();
        assertThat(ctx.authority().state()).isEqualTo("closed");
        assertThat(lockBusy("authority", ServeCommand.INSTANCE_LOCK)).as("instance lock still held").isFalse();
        assertThat(lockBusy("endpoint", ServeCommand.ENDPOINT_LOCK)).as("endpoint lock still held").isFalse();
    }

    @Test
    void unixEndpoint_secondCleanUp_leavesTheSocketAndLocksOfANewerHelperAlone() throws Exception {
        Path sock = tmp.resolve("endpoint/authority.sock");
        Prepared ctx = helper(new Endpoint.Unix(sock.toString()), null);
        closedListenerAt(sock);
        Runnable cleanUp = ctx.cleanUpOnce();
        cleanUp.run();
        assertThat(sock).doesNotExist();

        // A newer helper starts on the same endpoint: it takes both locks and listens on the path.
        lock("authority", ServeCommand.INSTANCE_LOCK);
        lock("endpoint", ServeCommand.ENDPOINT_LOCK);
        ServerSocketChannel newer = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        toClose.add(newer);
        newer.bind(UnixDomainSocketAddress.of(sock));

        cleanUp.run();

        assertThat(sock).exists();
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
            assertThat(c.isConnected()).as("the newer helper still answers on the path").isTrue();
        }
        assertThat(lockBusy("authority", ServeCommand.INSTANCE_LOCK)).as("newer helper's instance lock kept").isTrue();
        assertThat(lockBusy("endpoint", ServeCommand.ENDPOINT_LOCK)).as("newer helper's endpoint lock kept").isTrue();
    }

    @Test
    void tcpEndpoint_tokenRemovedAndZeroed_andASecondCleanUpLeavesANewerHelpersToken() throws Exception {
        Path tokenFile = tmp.resolve("endpoint/token");
        byte[] written = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        BearerToken token = BearerToken.of(written);
        Prepared ctx = helper(new Endpoint.Tcp("127.0.0.1", 7878, tokenFile.toString()), token);
        Files.write(tokenFile, written);

        Runnable cleanUp = ctx.cleanUpOnce();
        cleanUp.run();

        assertThat(tokenFile).doesNotExist();
        assertThat(token.isDestroyed()).isTrue();
        assertThat(token.matches(written)).as("a zeroed token matches nothing").isFalse();
        assertThat(lockBusy("endpoint", ServeCommand.ENDPOINT_LOCK)).isFalse();

        lock("endpoint", ServeCommand.ENDPOINT_LOCK);
        Files.writeString(tokenFile, "newer helper's token");

        cleanUp.run();

        assertThat(tokenFile).hasContent("newer helper's token");
    }

    /**
     * What {@code serve} would have prepared: an opened authority holding the
     * instance lock, and the endpoint directory with its lock.
     */
    private Prepared helper(Endpoint endpoint, BearerToken token) throws Exception {
        SecureDirectory authorityDir = open("authority");
        StableLock instance = authorityDir.lock(ServeCommand.INSTANCE_LOCK, LockMode.NON_BLOCKING);
        RunAuthority authority = RunAuthority.open(authorityDir, new SecureRandom());
        SecureDirectory endpointDir = open("endpoint");
        StableLock endpointLock = endpointDir.lock(ServeCommand.ENDPOINT_LOCK, LockMode.NON_BLOCKING);
        // Closed again after the test in case cleanUp() did not (all idempotent).
        toClose.add(authority);
        toClose.add(instance);
        toClose.add(endpointDir);
        toClose.add(endpointLock);
        return new Prepared(authority, instance, endpointDir, endpointLock, endpoint, token, provider.processWatcher(),
                PeerPolicy.tokenOnly(0));
    }

    /** A socket file at {@code sock} whose listener has closed (as when the exit handler runs). */
    private void closedListenerAt(Path sock) throws IOException {
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(sock));
        }
        assertThat(sock).exists();
    }

    private SecureDirectory open(String name) throws DirectoryRefusedException {
        SecureDirectory d = provider.open(tmp.resolve(name).toString(), OpenMode.CREATE_OR_VALIDATE);
        toClose.add(d);
        return d;
    }

    private StableLock lock(String dir, String name) throws DirectoryRefusedException {
        StableLock l = open(dir).lock(name, LockMode.NON_BLOCKING);
        toClose.add(l);
        return l;
    }

    /** Whether another holder has the lock (a non-blocking attempt is refused as busy). */
    private boolean lockBusy(String dir, String name) throws DirectoryRefusedException {
        try (SecureDirectory d = provider.open(tmp.resolve(dir).toString(), OpenMode.CREATE_OR_VALIDATE)) {
            try (StableLock ignored = d.lock(name, LockMode.NON_BLOCKING)) {
                return false;
            } catch (DirectoryRefusedException e) {
                assertThat(e.category()).isEqualTo(DirectoryRefusedException.Category.BUSY);
                return true;
            }
        }
    }

    @Test
    void removeStaleSocket_removesASocket_refusesAFifoOrAFile_andIgnoresAbsence(@TempDir Path dir) throws Exception {
        Path sock = dir.resolve("s.sock");
        try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.bind(UnixDomainSocketAddress.of(sock));
        }
        ServeCommand.removeStaleSocket(sock);
        assertThat(Files.exists(sock, java.nio.file.LinkOption.NOFOLLOW_LINKS)).isFalse();
        ServeCommand.removeStaleSocket(sock); // absent: nothing to do

        Path fifo = dir.resolve("fifo");
        Process mk = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mk.waitFor()).isZero();
        Path file = Files.writeString(dir.resolve("file"), "x");
        for (Path p : List.of(fifo, file)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> ServeCommand.removeStaleSocket(p))
                    .isInstanceOf(ServeCommand.Refusal.class).hasMessageContaining("is not a socket");
            assertThat(Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)).as(p.toString()).isTrue();
        }
    }
}
