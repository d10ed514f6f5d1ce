package spice.authority.app.api;

import java.net.InetAddress;
import java.util.HexFormat;
import spice.authority.app.runtime.BearerToken;
import spice.authority.snapshot.crypto.EndpointProofMac;

/**
 * The helper's half of the TCP endpoint proof ({@code GET /v1/endpoint-proof?nonce=HEX}): before a
 * client sends its bearer token on a loopback TCP connection, it asks the server on that
 * connection to prove it holds the token, with a fresh 32-byte nonce. The proof is
 * {@code HMAC-SHA256(key = token bytes, message = "spice-authority endpoint proof v2" || 0x00 || nonce
 * || n || address || port)}, as 64 lowercase hex digits, where {@code address} and {@code port} are
 * the helper's own end of the connection the request came on ({@code n} = 4 or 16, one byte; the
 * port as two bytes, big-endian). A process squatting on the port does not hold the token and cannot
 * answer it, so the client refuses it before the token or any body leaves the client.
 *
 * <p>SECURITY: the endpoint in the MAC is where this helper accepted the connection, and the client
 * checks it against where it connected: a squatter on another port or address that relays a
 * client's nonce here gets a proof of this helper's endpoint, which its client refuses.
 *
 * <p>Guarantees: the nonce is accepted only as exactly 64 lowercase hex digits (32 bytes); the
 * answer is a MAC of the token, never the token, and no message of this class contains the token
 * or the nonce. SECURITY: the domain string with its 0x00 separator keeps this MAC apart from any
 * other use of the token as a key. The MAC is {@link EndpointProofMac}, the same definition the
 * host library checks against.
 */
final class EndpointProof {
    /** Length of a nonce in bytes. */
    static final int NONCE_BYTES = EndpointProofMac.NONCE_BYTES;
    /** The route, matched exactly (method GET) by the transport guard. */
    static final String PATH = "/v1/endpoint-proof";
    /** What a nonce must be, as the problem detail and the OpenAPI document say it. */
    static final String NONCE_RULE = "nonce must be exactly 64 lowercase hex digits (32 random bytes)";

    private EndpointProof() {}

    /**
     * The nonce's bytes.
     *
     * @throws ApiException {@code 400 invalid_request} unless {@code hex} is exactly 64 lowercase hex digits
     */
    static byte[] nonce(String hex) {
        if (hex == null || hex.length() != NONCE_BYTES * 2) {
            throw ApiException.invalidRequest(NONCE_RULE);
        }
        for (int i = 0; i < hex.length(); i++) {
            char c = hex.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                throw ApiException.invalidRequest(NONCE_RULE);
            }
        }
        return HexFormat.of().parseHex(hex);
    }

    /**
     * The helper's end of a connection as the MAC names it: {@code host} must be a numeric IP
     * address literal (as Vert.x reports it; an IPv4-mapped IPv6 address is its IPv4 address).
     *
     * @throws IllegalArgumentException unless {@code host} is an IP address literal
     */
    static InetAddress local(String host) {
        if (host == null) {
            throw new IllegalArgumentException("the connection's local address is unknown");
        }
        return InetAddress.ofLiteral(host);
    }

    /**
     * The proof for {@code nonce} under {@code token} on a connection accepted at
     * {@code local}:{@code port}, as 64 lowercase hex digits.
     */
    static String proof(BearerToken token, byte[] nonce, InetAddress local, int port) {
        if (token == null) {
            throw new IllegalStateException("no bearer token to prove");
        }
        return HexFormat.of().formatHex(token.endpointProof(nonce, local.getAddress(), port));
    }
}
