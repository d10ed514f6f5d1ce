package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import spice.authority.app.testing.ScriptedTcpPlatform;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;

/**
 * The transport guard's use of a platform that identifies TCP peers (Windows): only a pid the
 * platform proves is let in; every refusal, failure or odd answer is a refusal (fail closed).
 */
class TcpPeerGuardTest {

    private static final InetSocketAddress PEER = new InetSocketAddress(InetAddress.getLoopbackAddress(), 50123);
    private static final InetSocketAddress LOCAL = new InetSocketAddress(InetAddress.getLoopbackAddress(), 47878);

    @Test
    void provenPid_isLetIn() {
        ScriptedTcpPlatform p = ScriptedTcpPlatform.answering(4321L);
        assertThat(TransportGuard.provenOwner(p, PEER, LOCAL)).isEqualTo(4321);
        assertThat(p.asked).containsExactly("50123->47878");
    }

    @Test
    void platformRefusal_isRefused() {
        assertThat(TransportGuard.provenOwner(ScriptedTcpPlatform.answering(new IOException("TCP peer 127.0.0.1:50123 refused: another user")),
                PEER, LOCAL)).isEqualTo(-1);
    }

    @Test
    void platformWithoutTheCheck_isRefusedNotWaved() {
        // the SPI's default: a platform that does not identify TCP peers throws; never "let in"
        SecureDirectoryProvider plain = new SecureDirectoryProvider() {
            @Override public String platform() { return "plain"; }
            @Override public boolean isSupported() { return true; }
            @Override public SecureDirectory open(String path, OpenMode mode) { throw new UnsupportedOperationException(); }
            @Override public String defaultDirectory() { return null; }
        };
        assertThat(TransportGuard.provenOwner(plain, PEER, LOCAL)).isEqualTo(-1);
        assertThat(TransportGuard.provenOwner(ScriptedTcpPlatform.answering(new IllegalStateException("broken")), PEER, LOCAL)).isEqualTo(-1);
    }

    @Test
    void oddPids_areRefused() {
        for (long pid : new long[] {0, -1, 1L << 31, Long.MAX_VALUE}) {
            assertThat(TransportGuard.provenOwner(ScriptedTcpPlatform.answering(pid), PEER, LOCAL)).as("pid %d", pid).isEqualTo(-1);
        }
    }

    @Test
    void nonIpAddresses_areRefusedWithoutAsking() {
        ScriptedTcpPlatform p = ScriptedTcpPlatform.answering(4321L);
        assertThat(TransportGuard.provenOwner(p, java.net.UnixDomainSocketAddress.of("/x"), LOCAL)).isEqualTo(-1);
        assertThat(TransportGuard.provenOwner(p, PEER, null)).isEqualTo(-1);
        assertThat(p.asked).isEmpty();
    }
}
