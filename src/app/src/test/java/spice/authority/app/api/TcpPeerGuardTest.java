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
import spice.authority.app.runtime.BearerToken;

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

    private static final BearerToken TOKEN = BearerToken.of("0123456789abcdef".repeat(4).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    private static final String BEARER = "Bearer 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /** A peer-pid answer that records whether it was asked. */
    private static final class PeerAnswer implements java.util.function.LongSupplier {
        final long pid;
        int asked;

        PeerAnswer(long pid) {
            this.pid = pid;
        }

        @Override
        public long getAsLong() {
            asked++;
            return pid;
        }
    }

    @Test
    void endpointProof_otherUsersPeer_isRefusedByThePeerCheck_tokenOrNot() {
        for (String auth : new String[] {null, BEARER}) {
            PeerAnswer other = new PeerAnswer(-1);
            TransportGuard.TcpAdmission a = TransportGuard.admitTcp(true, auth, TOKEN, true, other);
            assertThat(a.refusal()).as(String.valueOf(auth)).isEqualTo(TransportGuard.PEER_NOT_PROVEN);
            assertThat(other.asked).isEqualTo(1);
        }
    }

    @Test
    void endpointProof_needsNoToken_butAProvenPeerWhereThePlatformIdentifiesPeers() {
        PeerAnswer own = new PeerAnswer(4321);
        assertThat(TransportGuard.admitTcp(true, null, TOKEN, true, own)).isEqualTo(new TransportGuard.TcpAdmission(4321, null));
        assertThat(own.asked).isEqualTo(1);
        PeerAnswer unasked = new PeerAnswer(-1);
        assertThat(TransportGuard.admitTcp(true, "Bearer wrong", TOKEN, false, unasked))
                .isEqualTo(new TransportGuard.TcpAdmission(-1, null));
        assertThat(unasked.asked).isZero();
    }

    @Test
    void otherRoutes_needTheToken_thenAProvenPeer() {
        for (String auth : new String[] {null, "", "Bearer", "Bearer wrong", "Basic x", BEARER + "0"}) {
            PeerAnswer own = new PeerAnswer(4321);
            assertThat(TransportGuard.admitTcp(false, auth, TOKEN, true, own).refusal()).as(String.valueOf(auth))
                    .isEqualTo(TransportGuard.WRONG_TOKEN);
            assertThat(TransportGuard.admitTcp(false, auth, TOKEN, false, own).refusal()).isEqualTo(TransportGuard.WRONG_TOKEN);
            assertThat(own.asked).as("no platform call for a request without the token").isZero();
        }
        assertThat(TransportGuard.admitTcp(false, BEARER, TOKEN, true, new PeerAnswer(-1)).refusal())
                .isEqualTo(TransportGuard.PEER_NOT_PROVEN);
        assertThat(TransportGuard.admitTcp(false, BEARER, TOKEN, true, new PeerAnswer(77)))
                .isEqualTo(new TransportGuard.TcpAdmission(77, null));
        assertThat(TransportGuard.admitTcp(false, BEARER, TOKEN, false, new PeerAnswer(-1)))
                .isEqualTo(new TransportGuard.TcpAdmission(-1, null));
    }

    @Test
    void noTokenHeld_admitsNobody_notEvenAnEmptyBearer() {
        BearerToken zeroed = BearerToken.of("0".repeat(64).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        zeroed.close();
        for (String auth : new String[] {null, "", "Bearer ", "Bearer", "Bearer " + "0".repeat(64), "Bearer " + "\0".repeat(64)}) {
            assertThat(TransportGuard.admitTcp(false, auth, zeroed, false, new PeerAnswer(77)).refusal())
                    .as(String.valueOf(auth)).isEqualTo(TransportGuard.WRONG_TOKEN);
            assertThat(TransportGuard.admitTcp(false, auth, null, false, new PeerAnswer(77)).refusal())
                    .isEqualTo(TransportGuard.WRONG_TOKEN);
        }
    }
}
