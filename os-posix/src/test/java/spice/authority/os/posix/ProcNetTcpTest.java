package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** The owner of a TCP connection's end, from /proc/net/tcp: parsed from kernel text, then on real sockets. */
class ProcNetTcpTest {
    private static final String HEAD4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    private static final String HEAD6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

    private static InetSocketAddress at(String host, int port) throws IOException {
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }

    /** A row as Linux writes it on a little-endian machine. */
    private static String row4(String local, String remote, long uid) {
        return "   1: " + local + " " + remote + " 01 00000000:00000000 00:00000000 00000000  " + uid + "        0 4242 1 0000000000000000 20 4 30 10 -1\n";
    }

    @Test
    void ipv4Row_littleEndian_namesItsOwner() throws IOException {
        // client 127.0.0.1:50000 (C350) connected to the helper at 127.0.0.1:8080 (1F90)
        String t = HEAD4 + row4("0100007F:1F90", "0100007F:C350", 0) + row4("0100007F:C350", "0100007F:1F90", 1234);
        assertThat(ProcNetTcp.ownerUid(at("127.0.0.1", 50000), at("127.0.0.1", 8080), ByteOrder.LITTLE_ENDIAN, t))
                .isEqualTo(1234);
        assertThat(ProcNetTcp.ownerUid(at("127.0.0.1", 8080), at("127.0.0.1", 50000), ByteOrder.LITTLE_ENDIAN, t))
                .as("the helper's own end").isEqualTo(0);
        assertThat(ProcNetTcp.ownerUid(at("127.0.0.1", 50000), at("127.0.0.1", 8080), ByteOrder.LITTLE_ENDIAN, HEAD6))
                .as("not in this table").isEqualTo(-1);
        assertThat(ProcNetTcp.address("7F000001", ByteOrder.BIG_ENDIAN)).isEqualTo(InetAddress.getByName("127.0.0.1"));
    }

    @Test
    void ipv6Rows_andMappedIpv4_areMatched() throws IOException {
        String loop6 = "00000000000000000000000001000000"; // ::1, four little-endian words
        String mapped = "0000000000000000FFFF00000100007F"; // ::ffff:127.0.0.1
        String t6 = HEAD6 + "   0: " + loop6 + ":C350 " + loop6 + ":1F90 01 00000000:00000000 00:00000000 00000000  1000 0 1 1 0 20 4 30 10 -1\n"
                + "   1: " + mapped + ":C351 " + mapped + ":1F90 01 00000000:00000000 00:00000000 00000000  1001 0 1 1 0 20 4 30 10 -1\n";
        assertThat(ProcNetTcp.ownerUid(at("::1", 50000), at("::1", 8080), ByteOrder.LITTLE_ENDIAN, t6)).isEqualTo(1000);
        assertThat(ProcNetTcp.ownerUid(at("127.0.0.1", 50001), at("127.0.0.1", 8080), ByteOrder.LITTLE_ENDIAN, t6))
                .isEqualTo(1001);
    }

    @Test
    void noRow_disagreeingRows_orMalformedText_failClosed() throws IOException {
        String row = row4("0100007F:C350", "0100007F:1F90", 1234);
        assertThat(ProcNetTcp.ownerUid(at("127.0.0.1", 50000), at("127.0.0.1", 8081), ByteOrder.LITTLE_ENDIAN, HEAD4 + row))
                .as("no row: none").isEqualTo(-1);
        assertThatThrownBy(() -> ProcNetTcp.ownerUid(at("127.0.0.1", 50000), at("127.0.0.1", 8080), ByteOrder.LITTLE_ENDIAN,
                HEAD4 + row + row.replace("1234", "99"))).hasMessageContaining("different owners");
        for (String bad : new String[] {row.replace(":C350", ":C35"), row.replace("0100007F:C350", "0100007G:C350"),
                row.replace("1234", "-1"), row.replace("1234", "99999999999"), row.replace(":C350", ":ZZZZ"), "   1: x y\n"}) {
            assertThatThrownBy(() -> ProcNetTcp.ownerUid(at("127.0.0.1", 50000), at("127.0.0.1", 8080), ByteOrder.LITTLE_ENDIAN, HEAD4 + bad))
                    .as(bad).isInstanceOf(IOException.class);
        }
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void realConnection_ownEnd_isThisUsers() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             Socket accepted = server.accept()) {
            InetSocketAddress peer = (InetSocketAddress) accepted.getRemoteSocketAddress();
            InetSocketAddress local = (InetSocketAddress) accepted.getLocalSocketAddress();
            assertThat(ProcNetTcp.ownerUid(peer, local)).isEqualTo(Syscalls.LIBC.geteuid());
            new PosixSecureDirectoryProvider().requireTcpPeerOfThisUser(peer, local);
            InetSocketAddress gone = new InetSocketAddress(peer.getAddress(), local.getPort() == 1 ? 2 : 1);
            assertThatThrownBy(() -> ProcNetTcp.ownerUid(gone, local)).isInstanceOf(IOException.class)
                    .hasMessageContaining("no TCP socket");
        }
    }

    /**
     * A client run as another uid ({@code setpriv}, no passwd entry needed) is refused, naming its
     * uid. Root ignores permission bits, so the refusal can only come from this check.
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void realConnection_ofAnotherUid_isRefused() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/setpriv"))
                && java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/python3")),
                "setpriv and /usr/bin/python3 are needed to run a client as another uid");
        org.junit.jupiter.api.Assumptions.assumeTrue(Syscalls.LIBC.geteuid() == 0, "only root can switch uid");
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Process p = new ProcessBuilder("/usr/bin/setpriv", "--reuid=54321", "--regid=54321", "--clear-groups",
                    "/usr/bin/python3", "-c", "import socket,sys; s=socket.create_connection(('127.0.0.1'," + server.getLocalPort()
                    + ")); sys.stdin.read()").redirectErrorStream(true).start();
            try (Socket accepted = server.accept()) {
                InetSocketAddress peer = (InetSocketAddress) accepted.getRemoteSocketAddress();
                InetSocketAddress local = (InetSocketAddress) accepted.getLocalSocketAddress();
                assertThat(ProcNetTcp.ownerUid(peer, local)).isEqualTo(54321);
                assertThatThrownBy(() -> new PosixSecureDirectoryProvider().requireTcpPeerOfThisUser(peer, local))
                        .isInstanceOf(IOException.class).hasMessageContaining("uid 54321, not this user (uid 0)");
            } finally {
                p.getOutputStream().close();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor();
                }
            }
        }
    }
}
