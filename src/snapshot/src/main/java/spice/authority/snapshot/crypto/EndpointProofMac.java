package spice.authority.snapshot.crypto;

import java.nio.charset.StandardCharsets;

/**
 * The MAC of the TCP endpoint proof, the one definition the helper (which answers it) and the host
 * library (which checks it) both use, so their framing cannot drift apart:
 * {@code HMAC-SHA256(key = token bytes, message = DOMAIN || 0x00 || nonce || n || address || port)},
 * with a 32-byte nonce, {@code n} = 4 or 16 (one byte), the server's IP address, and its port as
 * two bytes, big-endian.
 *
 * <p>Guarantees: computed by {@link HmacSha256#once}, so no copy of the token outlives the call;
 * the token itself is not changed. The domain string with its 0x00 separator keeps this MAC apart
 * from any other use of the token as a key. No message contains the token or the nonce.
 */
public final class EndpointProofMac {
    /** The domain separation string (ASCII), followed by one 0x00 byte in the MAC input. */
    public static final String DOMAIN = "spice-authority endpoint proof v2";
    /** Length of a nonce in bytes. */
    public static final int NONCE_BYTES = 32;

    private EndpointProofMac() {}

    /**
     * The MAC of {@code nonce} for the server endpoint {@code address}:{@code port} under {@code token}.
     *
     * @throws IllegalArgumentException for an empty token, a nonce that is not 32 bytes, an address
     *     that is not 4 or 16 bytes, or a port outside 0..65535
     */
    public static byte[] of(byte[] token, byte[] nonce, byte[] address, int port) {
        if (nonce.length != NONCE_BYTES) {
            throw new IllegalArgumentException("nonce must be " + NONCE_BYTES + " bytes");
        }
        if (address.length != 4 && address.length != 16) {
            throw new IllegalArgumentException("address must be 4 or 16 bytes");
        }
        if (port < 0 || port > 0xffff) {
            throw new IllegalArgumentException("port out of range");
        }
        return HmacSha256.once(token, DOMAIN.getBytes(StandardCharsets.US_ASCII), new byte[] {0}, nonce,
                new byte[] {(byte) address.length}, address, new byte[] {(byte) (port >>> 8), (byte) port});
    }
}
