package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.contract.ProblemCode;
import spice.authority.app.runtime.BearerToken;

/** The helper's endpoint-proof computation and nonce rule, against vectors computed apart from it. */
class EndpointProofTest {
    private static final byte[] TOKEN = "feedface".repeat(8).getBytes(StandardCharsets.US_ASCII);
    private static final String NONCE = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    private static final InetAddress LOOPBACK = InetAddress.ofLiteral("127.0.0.1");
    /** Computed with Python's hmac: HMAC-SHA256(TOKEN, DOMAIN || 0x00 || NONCE || 4 || 127.0.0.1 || 8421 big-endian). */
    private static final String VECTOR = "71e7d4c20286b9e8dc4f471fd77b02042b4e68bd29fa5df2fff92913d7fb68b9";
    private static final byte[] TOKEN2 = "0123456789abcdef".repeat(4).getBytes(StandardCharsets.US_ASCII);
    private static final String NONCE2 = "ff".repeat(32);
    /** The same for TOKEN2, NONCE2 and [::1]:65535 (address length 16). */
    private static final String VECTOR2 = "7c526d496ca17a29daa69509669dfa731ec74ca2657f5997f3316c20af796b6b";

    @Test
    void proof_fixedVectors_matchOpenSslAndJavaxCryptoDirectly() throws Exception {
        assertThat(EndpointProof.proof(BearerToken.of(TOKEN), EndpointProof.nonce(NONCE), LOOPBACK, 8421)).isEqualTo(VECTOR);
        assertThat(EndpointProof.proof(BearerToken.of(TOKEN2), EndpointProof.nonce(NONCE2), EndpointProof.local("0:0:0:0:0:0:0:1"), 65535))
                .isEqualTo(VECTOR2);
        Mac direct = Mac.getInstance("HmacSHA256");
        direct.init(new SecretKeySpec(TOKEN, "HmacSHA256"));
        direct.update("spice-authority endpoint proof v2\0".getBytes(StandardCharsets.US_ASCII));
        direct.update(HexFormat.of().parseHex(NONCE));
        assertThat(HexFormat.of().formatHex(direct.doFinal(new byte[] {4, 127, 0, 0, 1, (byte) (8421 >> 8), (byte) 8421})))
                .isEqualTo(VECTOR);
    }

    @Test
    void proof_namesTheHelpersEndOfTheConnection_soARelayedProofDiffers() {
        byte[] nonce = EndpointProof.nonce(NONCE);
        String here = EndpointProof.proof(BearerToken.of(TOKEN), nonce, LOOPBACK, 8421);
        assertThat(EndpointProof.proof(BearerToken.of(TOKEN), nonce, LOOPBACK, 8422)).isNotEqualTo(here);
        assertThat(EndpointProof.proof(BearerToken.of(TOKEN), nonce, InetAddress.ofLiteral("127.0.0.2"), 8421)).isNotEqualTo(here);
        // An IPv4-mapped address (a dual-stack listener) is the IPv4 address the client connected to.
        assertThat(EndpointProof.proof(BearerToken.of(TOKEN), nonce, EndpointProof.local("::ffff:127.0.0.1"), 8421)).isEqualTo(here);
    }

    @Test
    void local_onlyAnIpLiteral_neverAName() {
        for (String bad : new String[] {null, "localhost", "", "127.0.0.1:8421"}) {
            assertThat(catchThrowableOfType(IllegalArgumentException.class, () -> EndpointProof.local(bad))).as(bad).isNotNull();
        }
    }

    @Test
    void proof_isNeverTheToken_andDependsOnTheNonce() {
        String a = EndpointProof.proof(BearerToken.of(TOKEN), EndpointProof.nonce(NONCE), LOOPBACK, 8421);
        String b = EndpointProof.proof(BearerToken.of(TOKEN), EndpointProof.nonce(NONCE2), LOOPBACK, 8421);
        assertThat(a).isNotEqualTo(b).doesNotContain(new String(TOKEN, StandardCharsets.US_ASCII)).matches("[0-9a-f]{64}");
    }

    @Test
    void nonce_anythingButExactly64LowercaseHex_is400InvalidRequest() {
        for (String bad : new String[] {null, "", NONCE.substring(1), NONCE + "0", NONCE.toUpperCase(), "g".repeat(64),
                " " + NONCE.substring(1), NONCE.substring(0, 63) + "\n", "+" + NONCE.substring(1), "٠".repeat(64)}) {
            ApiException e = catchThrowableOfType(ApiException.class, () -> EndpointProof.nonce(bad));
            assertThat(e).as(String.valueOf(bad)).isNotNull();
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo(ProblemCode.INVALID_REQUEST);
            assertThat(e.getMessage()).isEqualTo("nonce must be exactly 64 lowercase hex digits (32 random bytes)");
        }
        assertThat(EndpointProof.nonce(NONCE)).hasSize(32);
    }
}
