package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import spice.authority.os.PeerCredentials;

/**
 * {@link DarwinPeer} on Linux, against {@link FakeDarwin}'s {@code getsockopt} (which answers
 * only at level {@code SOL_LOCAL}, as the options live there): credentials from a whole
 * {@code struct xucred} of version 0 and a positive pid, and a refusal for anything else.
 */
class DarwinPeerTest {

    private final FakeDarwin kernel = new FakeDarwin();
    private final DarwinPeer peer = new DarwinPeer(kernel, kernel.layout);

    private static byte[] xucred(int version, int uid, int length) {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        if (length >= 8) {
            b.putInt(0, version);
            b.putInt(4, uid);
        }
        if (length >= 10) {
            b.putShort(8, (short) 1);
        }
        return b.array();
    }

    private static byte[] pid(int pid) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, pid).array();
    }

    @Test
    void read_wholeXucredAndPid_givesTheCredentials() throws Exception {
        kernel.sockopt(1, xucred(0, 501, 76));
        kernel.sockopt(2, pid(4321));
        assertThat(peer.read(7)).isEqualTo(new PeerCredentials(4321, 501));
    }

    @Test
    void read_shortOrForeignXucred_isRefused() {
        kernel.sockopt(2, pid(4321));
        for (byte[] bad : new byte[][] {xucred(0, 501, 4), xucred(0, 501, 75), xucred(1, 501, 76)}) {
            kernel.sockopt(1, bad);
            assertThatThrownBy(() -> peer.read(7)).isInstanceOf(IOException.class).hasMessageContaining("LOCAL_PEERCRED");
        }
    }

    @Test
    void read_noPid_isRefused() {
        kernel.sockopt(1, xucred(0, 501, 76));
        kernel.sockopt(2, pid(0));
        assertThatThrownBy(() -> peer.read(7)).isInstanceOf(IOException.class).hasMessageContaining("LOCAL_PEERPID");
        kernel.sockopt(2, new byte[2]);
        assertThatThrownBy(() -> peer.read(7)).isInstanceOf(IOException.class);
    }

    @Test
    void read_failingCall_isRefused_withTheErrno() {
        kernel.sockopt(2, pid(4321));
        kernel.sockoptError(1, 57); // ENOTCONN on macOS
        assertThatThrownBy(() -> peer.read(7)).isInstanceOf(IOException.class).hasMessageContaining("getsockopt");
    }

    @Test
    void peerCredentials_validFromBirth() {
        assertThatThrownBy(() -> new PeerCredentials(0, 501)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PeerCredentials(1, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PeerCredentials(1, 1L << 32)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new PeerCredentials(1, 0xFFFF_FFFEL).uid()).isEqualTo(0xFFFF_FFFEL);
    }

    @Test
    void provider_onLinux_refusesSocketPeerCredentials() {
        org.junit.jupiter.api.Assumptions.assumeTrue(PosixPlatform.current().map(PosixPlatform::hasPidfd).orElse(false));
        assertThatThrownBy(() -> new PosixSecureDirectoryProvider().peerCredentials(0))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("SO_PEERCRED");
    }
}
