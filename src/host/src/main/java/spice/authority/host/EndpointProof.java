package spice.authority.host;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The client's half of the TCP endpoint proof: before the bearer token is sent on a loopback TCP
 * connection, the server on that connection must answer {@code GET /v1/endpoint-proof?nonce=HEX}
 * with {@code {"proof": HEX}}, where the proof is
 * {@code HMAC-SHA256(key = token bytes, message = "spice-authority endpoint proof v1" || 0x00 || nonce)}
 * over a fresh 32-byte nonce. Only a process that holds the token can answer it.
 *
 * <p>Guarantees: nonces come from {@link SecureRandom}; {@link #verify} compares in constant time
 * and returns nothing: it throws on any answer that is not exactly the expected proof. No message
 * contains the token, the nonce or the proof.
 */
final class EndpointProof {
    /** The route, answered by the helper without the token. */
    static final String PATH = "/v1/endpoint-proof";
    /** The domain separation string (ASCII), followed by one 0x00 byte in the MAC input. */
    static final String DOMAIN = "spice-authority endpoint proof v1";
    static final int NONCE_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A proof answer that is not the expected one; the reason leaks nothing of the token. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String reason) {
            super(reason, null, false, false);
        }
    }

    private EndpointProof() {}

    /** A fresh nonce. */
    static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    /** The request target that asks for the proof of {@code nonce}. */
    static String target(byte[] nonce) {
        return PATH + "?nonce=" + HexFormat.of().formatHex(nonce);
    }

    /** The expected proof: the MAC of the domain string, 0x00 and {@code nonce} under {@code token}. */
    static byte[] mac(byte[] token, byte[] nonce) {
        if (nonce.length != NONCE_BYTES) {
            throw new IllegalArgumentException("nonce must be " + NONCE_BYTES + " bytes");
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(token, "HmacSHA256"));
            mac.update(DOMAIN.getBytes(StandardCharsets.US_ASCII));
            mac.update((byte) 0);
            mac.update(nonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", null);
        }
    }

    /**
     * Checks the server's answer body against the proof of {@code nonce} under {@code token}.
     *
     * @throws Refused unless the body is a JSON object whose member {@code proof} is exactly the
     *     expected MAC as 64 lowercase hex digits
     */
    static void verify(byte[] token, byte[] nonce, byte[] body) throws Refused {
        Object proof;
        try {
            proof = Json.object(body).get("proof");
        } catch (Json.Malformed e) {
            throw new Refused("its answer is not a JSON object");
        }
        if (!(proof instanceof String hex)) {
            throw new Refused("its answer has no proof");
        }
        if (hex.length() != NONCE_BYTES * 2 || !hex.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw new Refused("its proof is not 64 lowercase hex digits");
        }
        byte[] expected = mac(token, nonce);
        // SECURITY: constant time, so the comparison tells nothing about how much of the MAC matched.
        if (!MessageDigest.isEqual(expected, HexFormat.of().parseHex(hex))) {
            throw new Refused("its proof is wrong");
        }
    }
}
