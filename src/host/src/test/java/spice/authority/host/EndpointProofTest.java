package spice.authority.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** The client's endpoint-proof computation and check, against vectors computed apart from it. */
class EndpointProofTest {
    private static final byte[] TOKEN = "feedface".repeat(8).getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NONCE = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    private static final InetSocketAddress SERVER = new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 8421);
    /** Computed with Python's hmac: HMAC-SHA256(TOKEN, DOMAIN || 0x00 || NONCE || 4 || 127.0.0.1 || 8421 big-endian). */
    private static final String VECTOR = "71e7d4c20286b9e8dc4f471fd77b02042b4e68bd29fa5df2fff92913d7fb68b9";
    private static final InetSocketAddress SERVER2 = new InetSocketAddress(InetAddress.ofLiteral("::1"), 65535);
    private static final byte[] TOKEN2 = "0123456789abcdef".repeat(4).getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NONCE2 = HexFormat.of().parseHex("ff".repeat(32));
    /** The same for TOKEN2, NONCE2 and [::1]:65535 (address length 16). */
    private static final String VECTOR2 = "7c526d496ca17a29daa69509669dfa731ec74ca2657f5997f3316c20af796b6b";
    /** VECTOR's token and nonce, for 127.0.0.1:8422: the proof of another port. */
    private static final String OTHER_PORT = "4f5bb64f585e117bb2dd5d721bb4589c19782bb2abad1c8063fed872afd98e46";

    private static byte[] body(String proof) {
        return ("{\"proof\":\"" + proof + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void mac_fixedVectors_matchOpenSslAndJavaxCryptoDirectly() throws Exception {
        assertThat(HexFormat.of().formatHex(EndpointProof.mac(TOKEN, NONCE, SERVER))).isEqualTo(VECTOR);
        assertThat(HexFormat.of().formatHex(EndpointProof.mac(TOKEN2, NONCE2, SERVER2))).isEqualTo(VECTOR2);
        assertThat(HexFormat.of().formatHex(EndpointProof.mac(TOKEN, NONCE,
                new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 8422)))).isEqualTo(OTHER_PORT);
        Mac direct = Mac.getInstance("HmacSHA256");
        direct.init(new SecretKeySpec(TOKEN, "HmacSHA256"));
        byte[] input = new byte[33 + 1 + 32 + 1 + 4 + 2];
        System.arraycopy("spice-authority endpoint proof v2".getBytes(StandardCharsets.US_ASCII), 0, input, 0, 33);
        System.arraycopy(NONCE, 0, input, 34, 32);
        System.arraycopy(new byte[] {4, 127, 0, 0, 1, (byte) (8421 >> 8), (byte) 8421}, 0, input, 66, 7);
        assertThat(HexFormat.of().formatHex(direct.doFinal(input))).isEqualTo(VECTOR);
    }

    @Test
    void mac_keepsNoJavaxCryptoCopyOfTheToken_andLeavesTheCallersTokenAsItWas() throws Exception {
        // SecretKeySpec clones the token and Mac keeps it in its own key state; neither can be
        // zeroed by the caller. The class must not reach javax.crypto at all.
        byte[] classFile;
        try (var in = EndpointProof.class.getResourceAsStream("EndpointProof.class")) {
            classFile = in.readAllBytes();
        }
        assertThat(new String(classFile, StandardCharsets.ISO_8859_1)).doesNotContain("javax/crypto");
        byte[] token = TOKEN.clone();
        EndpointProof.mac(token, NONCE, SERVER);
        assertThat(token).isEqualTo(TOKEN);
        assertThatThrownBy(() -> EndpointProof.mac(new byte[0], NONCE, SERVER)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void verify_theExpectedProof_passes() throws Exception {
        EndpointProof.verify(TOKEN, NONCE, SERVER, body(VECTOR));
        EndpointProof.verify(TOKEN, NONCE, SERVER, ("{\"proof\": \"" + VECTOR + "\", \"other\": 1}").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void verify_anyOtherAnswer_isRefusedWithoutShowingTokenOrProof() {
        String otherNonce = HexFormat.of().formatHex(EndpointProof.mac(TOKEN, NONCE2, SERVER));
        String otherToken = HexFormat.of().formatHex(EndpointProof.mac(TOKEN2, NONCE, SERVER));
        String otherAddress = HexFormat.of().formatHex(EndpointProof.mac(TOKEN, NONCE,
                new InetSocketAddress(InetAddress.ofLiteral("127.0.0.2"), 8421)));
        String[][] cases = {
                {"wrong nonce", "{\"proof\":\"" + otherNonce + "\"}", "its proof is wrong"},
                {"wrong token", "{\"proof\":\"" + otherToken + "\"}", "its proof is wrong"},
                {"another port (relayed)", "{\"proof\":\"" + OTHER_PORT + "\"}", "its proof is wrong"},
                {"another address (relayed)", "{\"proof\":\"" + otherAddress + "\"}", "its proof is wrong"},
                {"unbound v1 proof", "{\"proof\":\"deaaf55ce666ec699a7b6a39edc618360b2ddabfd4617d5dbb7174fc01aa87d5\"}",
                        "its proof is wrong"},
                {"upper case", "{\"proof\":\"" + VECTOR.toUpperCase() + "\"}", "not 64 lowercase hex"},
                {"short", "{\"proof\":\"" + VECTOR.substring(2) + "\"}", "not 64 lowercase hex"},
                {"long", "{\"proof\":\"" + VECTOR + "00\"}", "not 64 lowercase hex"},
                {"the token itself", "{\"proof\":\"" + new String(TOKEN, StandardCharsets.US_ASCII) + "\"}", "its proof is wrong"},
                {"number", "{\"proof\":1}", "no proof"},
                {"missing", "{\"ok\":true}", "no proof"},
                {"array", "[\"" + VECTOR + "\"]", "not a JSON object"},
                {"not JSON", "proof=" + VECTOR, "not a JSON object"},
                {"empty", "", "not a JSON object"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> EndpointProof.verify(TOKEN, NONCE, SERVER, c[1].getBytes(StandardCharsets.UTF_8)))
                    .as(c[0]).isInstanceOf(EndpointProof.Refused.class).hasMessageContaining(c[2])
                    .hasMessageNotContaining(new String(TOKEN, StandardCharsets.US_ASCII)).hasMessageNotContaining(VECTOR.substring(0, 16));
        }
    }

    @Test
    void nonce_isFresh32Bytes_andTheTargetCarriesItAsLowercaseHex() {
        byte[] a = EndpointProof.nonce();
        byte[] b = EndpointProof.nonce();
        assertThat(a).hasSize(32).isNotEqualTo(b);
        assertThat(EndpointProof.target(NONCE)).isEqualTo("/v1/endpoint-proof?nonce=" + HexFormat.of().formatHex(NONCE));
        assertThat(EndpointProof.target(a)).matches("/v1/endpoint-proof\\?nonce=[0-9a-f]{64}");
    }
}
