package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** The helper's endpoint-proof computation and nonce rule, against vectors computed apart from it. */
class EndpointProofTest {
    private static final byte[] TOKEN = "feedface".repeat(8).getBytes(StandardCharsets.US_ASCII);
    private static final String NONCE = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    /** Computed with OpenSSL and Python's hmac: HMAC-SHA256(TOKEN, DOMAIN || 0x00 || NONCE). */
    private static final String VECTOR = "deaaf55ce666ec699a7b6a39edc618360b2ddabfd4617d5dbb7174fc01aa87d5";
    private static final byte[] TOKEN2 = "0123456789abcdef".repeat(4).getBytes(StandardCharsets.US_ASCII);
    private static final String NONCE2 = "ff".repeat(32);
    private static final String VECTOR2 = "803511f14d8642e6b8fc4dfe485dfbb517d8d5152d9936be1b9855c1e1e295d0";

    @Test
    void proof_fixedVectors_matchOpenSslAndJavaxCryptoDirectly() throws Exception {
        assertThat(EndpointProof.proof(TOKEN, EndpointProof.nonce(NONCE))).isEqualTo(VECTOR);
        assertThat(EndpointProof.proof(TOKEN2, EndpointProof.nonce(NONCE2))).isEqualTo(VECTOR2);
        Mac direct = Mac.getInstance("HmacSHA256");
        direct.init(new SecretKeySpec(TOKEN2, "HmacSHA256"));
        direct.update("spice-authority endpoint proof v1\0".getBytes(StandardCharsets.US_ASCII));
        assertThat(HexFormat.of().formatHex(direct.doFinal(HexFormat.of().parseHex(NONCE2)))).isEqualTo(VECTOR2);
    }

    @Test
    void proof_isNeverTheToken_andDependsOnTheNonce() {
        String a = EndpointProof.proof(TOKEN, EndpointProof.nonce(NONCE));
        String b = EndpointProof.proof(TOKEN, EndpointProof.nonce(NONCE2));
        assertThat(a).isNotEqualTo(b).doesNotContain(new String(TOKEN, StandardCharsets.US_ASCII)).matches("[0-9a-f]{64}");
    }

    @Test
    void nonce_anythingButExactly64LowercaseHex_is400InvalidRequest() {
        for (String bad : new String[] {null, "", NONCE.substring(1), NONCE + "0", NONCE.toUpperCase(), "g".repeat(64),
                " " + NONCE.substring(1), NONCE.substring(0, 63) + "\n", "+" + NONCE.substring(1), "٠".repeat(64)}) {
            ApiException e = catchThrowableOfType(ApiException.class, () -> EndpointProof.nonce(bad));
            assertThat(e).as(String.valueOf(bad)).isNotNull();
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo("invalid_request");
            assertThat(e.getMessage()).isEqualTo("nonce must be exactly 64 lowercase hex digits (32 random bytes)");
        }
        assertThat(EndpointProof.nonce(NONCE)).hasSize(32);
    }
}
