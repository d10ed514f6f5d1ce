package spice.authority.snapshot.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class EndpointProofMacTest {
    private static final byte[] TOKEN = "feedface".repeat(8).getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NONCE = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    private static final byte[] LOOPBACK = {127, 0, 0, 1};

    @Test
    void of_matchesTheVectorComputedWithPythonsHmac_andLeavesTheTokenAsItWas() {
        // HMAC-SHA256(TOKEN, DOMAIN || 0x00 || NONCE || 4 || 127.0.0.1 || 8421 big-endian), Python's hmac.
        assertThat(HexFormat.of().formatHex(EndpointProofMac.of(TOKEN, NONCE, LOOPBACK, 8421)))
                .isEqualTo("71e7d4c20286b9e8dc4f471fd77b02042b4e68bd29fa5df2fff92913d7fb68b9");
        assertThat(TOKEN).isEqualTo("feedface".repeat(8).getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void of_refusesAnInputOutsideTheFraming() {
        assertThatThrownBy(() -> EndpointProofMac.of(new byte[0], NONCE, LOOPBACK, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EndpointProofMac.of(TOKEN, new byte[31], LOOPBACK, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EndpointProofMac.of(TOKEN, NONCE, new byte[5], 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EndpointProofMac.of(TOKEN, NONCE, LOOPBACK, 65536)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EndpointProofMac.of(TOKEN, NONCE, LOOPBACK, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
