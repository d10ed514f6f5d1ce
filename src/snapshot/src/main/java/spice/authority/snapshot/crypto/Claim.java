package spice.authority.snapshot.crypto;

import java.util.Arrays;
import spice.authority.snapshot.json.GoText;

/**
 * The public authority claim of an envelope: scope ID, authority key generation and HMAC.
 *
 * <p><b>Guarantees.</b> Well-shaped from birth (E-AUTH-SHAPE): 32-byte scope, generation at least
 * 1 (unsigned), 32-byte HMAC. Immutable. A claim is public; holding one proves nothing until a
 * keyed verifier accepts it.
 */
public final class Claim {
    private final byte[] scopeId;
    private final long generation;
    private final byte[] hmac;

    public Claim(byte[] scopeId, long generation, byte[] hmac) {
        if (!isWellShaped(scopeId, generation, hmac)) {
            throw new IllegalArgumentException("claim must carry a 32-byte scope, a generation of at least 1 and a 32-byte HMAC");
        }
        this.scopeId = scopeId.clone();
        this.generation = generation;
        this.hmac = hmac.clone();
    }

    /** E-AUTH-SHAPE. */
    public static boolean isWellShaped(byte[] scopeId, long generation, byte[] hmac) {
        return scopeId != null && scopeId.length == 32 && generation != 0 && hmac != null && hmac.length == 32;
    }

    public byte[] scopeId() {
        return scopeId.clone();
    }

    byte[] scopeIdUnsafe() {
        return scopeId;
    }

    /** Authority key generation, unsigned. */
    public long generation() {
        return generation;
    }

    public byte[] hmac() {
        return hmac.clone();
    }

    byte[] hmacUnsafe() {
        return hmac;
    }

    /** Constant-time equality of all three fields. */
    public boolean sameAs(Claim other) {
        boolean scope = java.security.MessageDigest.isEqual(scopeId, other.scopeId);
        boolean mac = java.security.MessageDigest.isEqual(hmac, other.hmac);
        return scope & mac & generation == other.generation;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Claim c && sameAs(c);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(scopeId) ^ Long.hashCode(generation);
    }

    /** The scope is public; the MAC is shown only by length (logs must not carry claim MACs). */
    @Override
    public String toString() {
        return "Claim[scope_id=" + GoText.hex(scopeId) + ", generation=" + Long.toUnsignedString(generation)
                + ", hmac_sha256=<32 bytes>]";
    }
}
