package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.PeerCredentials;

/**
 * {@code LOCAL_PEERCRED} and {@code LOCAL_PEERPID} on a real macOS Unix socket. Both ends are
 * this JVM's, found as the descriptors that appeared in {@code /dev/fd} when they were opened
 * (the JDK does not hand out descriptor numbers), so each must name this process and user.
 *
 * <p>NOT RUN HERE: macOS only; it has never run.
 */
@EnabledOnOs(OS.MAC)
class DarwinPeerMacTest {

    private static Set<Integer> fds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/dev/fd"))) {
            return s.map(p -> Integer.parseInt(p.getFileName().toString())).collect(Collectors.toSet());
        }
    }

    @Test
    void connectedPair_bothEndsNameThisProcessAndUser_otherDescriptorsAreRefused() throws Exception {
        Path dir = Files.createTempDirectory("spice-peer-");
        Path sock = dir.resolve("s");
        PosixSecureDirectoryProvider provider = new PosixSecureDirectoryProvider();
        Set<Integer> before = fds();
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            try (SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(sock));
                 SocketChannel accepted = server.accept()) {
                assertThat(client.isConnected() && accepted.isConnected()).isTrue();
                Set<Integer> fresh = new HashSet<>(fds());
                fresh.removeAll(before);
                int answered = 0;
                for (int fd : fresh) {
                    try {
                        PeerCredentials pc = provider.peerCredentials(fd);
                        assertThat(pc).isEqualTo(new PeerCredentials(ProcessHandle.current().pid(), Libc.geteuid()));
                        answered++;
                    } catch (IOException refused) {
                        // the listening socket (not connected), or a descriptor of the JDK's own
                    }
                }
                // both connected ends; a listener that answered would have to name us too
                assertThat(answered).as("both connected ends, among %s", fresh).isGreaterThanOrEqualTo(2);
            }
        } finally {
            Files.deleteIfExists(sock);
            Files.delete(dir);
        }
        Path file = Files.createTempFile("spice-peer-", ".txt");
        try (var ch = Files.newByteChannel(file)) {
            Set<Integer> fresh = new HashSet<>(fds());
            for (int fd : fresh) {
                if (!before.contains(fd)) {
                    assertThatThrownBy(() -> provider.peerCredentials(fd)).as("fd %d is a file", fd)
                            .isInstanceOf(IOException.class);
                }
            }
        } finally {
            Files.delete(file);
        }
    }
}
