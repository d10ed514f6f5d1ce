package spice.authority.host;

import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import spice.authority.snapshot.crypto.EndpointProofMac;

/**
 * The client's half of the TCP endpoint proof: before the bearer token is sent on a loopback TCP
 * connection, the server on that connection must answer {@code GET /v1/endpoint-proof?nonce=HEX}
 * with {@code {"proof": HEX}}, where the proof is
 * {@code HMAC-SHA256(key = token bytes, message = "spice-authority endpoint proof v2" || 0x00 || nonce || n
 * || address || port)} over a fresh 32-byte nonce, where {@code address} is the server's IP address
 * on this connection ({@code n} = 4 or 16 bytes, one byte) and {@code port} its port (two bytes,
 * big-endian). Only a process that holds the token can answer it.
 *
 * <p>SECURITY: the endpoint in the MAC is the one the client connected to, and the helper puts in
 * the address its own connection was accepted on. A squatter on the client's port that relays the
 * nonce to the real helper listening elsewhere (another port or address) gets a proof of the
 * helper's endpoint, not of its own, and the client refuses it: the proof cannot be forwarded.
 *
 * <p>Guarantees: nonces come from {@link SecureRandom}; {@link #verify} compares in constant time
 * and returns nothing: it throws on any answer that is not exactly the expected proof. No message
 * contains the token, the nonce or the proof.
 */
final class EndpointProof {
    /** The route, answered by the helper without the token. */
    static final String PATH = "/v1/endpoint-proof";
    static final int NONCE_BYTES = EndpointProofMac.NONCE_BYTES;
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

    /**
     * The expected proof: the MAC of the domain string, 0x00, {@code nonce} and the {@code server}
     * endpoint (address length, address, port) under {@code token}.
     */
    static byte[] mac(byte[] token, byte[] nonce, InetSocketAddress server) {
        if (server.getAddress() == null) {
            throw new IllegalArgumentException("the server's address is not resolved");
        }
        return EndpointProofMac.of(token, nonce, server.getAddress().getAddress(), server.getPort());
    }

    /**
     * Checks the server's answer body against the proof of {@code nonce} and {@code server} (the
     * address and port this client connected to) under {@code token}.
     *
     * @throws Refused unless the body is a JSON object whose member {@code proof} is exactly the
     *     expected MAC as 64 lowercase hex digits
     */
    static void verify(byte[] token, byte[] nonce, InetSocketAddress server, byte[] body) throws Refused {
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
        byte[] expected = mac(token, nonce, server);
        // SECURITY: constant time, so the comparison tells nothing about how much of the MAC matched.
        if (!MessageDigest.isEqual(expected, HexFormat.of().parseHex(hex))) {
            throw new Refused("its proof is wrong");
        }
    }
}
