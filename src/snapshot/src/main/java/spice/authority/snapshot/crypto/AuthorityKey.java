package spice.authority.snapshot.crypto;

import java.security.MessageDigest;
import java.util.Arrays;

/**
 * An in-memory snapshot authority (wire-format.md c.3): a public scope ID, an authority key
 * generation and an HMAC key. Signs claim inputs and verifies claims.
 *
 * <p><b>Guarantees.</b> Signing always yields a well-shaped {@link Claim}. {@link #verify} throws
 * the single {@link VerificationException} for every failure (wrong scope, generation or MAC) after
 * comparing scope and MAC in constant time; it returns nothing on success. {@link #close()} zeroes
 * the key. For the OS-backed authority the key is the per-run subkey ({@link RunSubkey}).
 */
public final class AuthorityKey implements AutoCloseable {
    /** Domain of the canonical MAC input (component 1). */
    public static final String DOMAIN = "spice.agent.run-authority/v1";

    private final byte[] scopeId;
    private final long generation;
    private final HmacSha256 mac;

    /**
     * @param key the HMAC key; its bytes are copied into the MAC's key blocks, so the caller
     *     keeps ownership of {@code key} and should destroy it when no longer needed
     */
    public AuthorityKey(byte[] scopeId, long generation, SecretKeyBytes key) {
        if (scopeId == null || scopeId.length != 32) {
            throw new IllegalArgumentException("scope ID must be 32 bytes");
        }
        if (generation == 0) {
            throw new IllegalArgumentException("generation must be at least 1");
        }
        this.scopeId = scopeId.clone();
        this.generation = generation;
        this.mac = new HmacSha256(key);
    }

    public byte[] scopeId() {
        return scopeId.clone();
    }

    public long generation() {
        return generation;
    }

    /** Signs {@code input}: HMAC-SHA256(key, canonical input at this scope and generation). */
    public Claim sign(ClaimInput input) {
        byte[] macInput = input.canonicalMacInput(scopeId, generation);
        return new Claim(scopeId, generation, mac.compute(macInput));
    }

    /**
     * Verifies {@code claim} for {@code input}: builds the canonical input from the claim's scope and
     * generation, then checks scope, generation and MAC.
     *
     * @throws VerificationException on any failure, always the same
     */
    public void verify(ClaimInput input, Claim claim) throws VerificationException {
        if (claim == null || input == null) {
            throw VerificationException.failed();
        }
        byte[] expected = mac.compute(input.canonicalMacInput(claim.scopeIdUnsafe(), claim.generation()));
        boolean scopeOk = MessageDigest.isEqual(scopeId, claim.scopeIdUnsafe());
        boolean macOk = MessageDigest.isEqual(expected, claim.hmacUnsafe());
        boolean genOk = generation == claim.generation();
        Arrays.fill(expected, (byte) 0);
        if (!(scopeOk & macOk & genOk)) {
            throw VerificationException.failed();
        }
    }

    /** Zeroes the key material. */
    @Override
    public void close() {
        mac.destroy();
    }

    @Override
    public String toString() {
        return "AuthorityKey[scope_id=" + spice.authority.snapshot.json.GoText.hex(scopeId) + ", generation="
                + Long.toUnsignedString(generation) + ", key=<redacted>]";
    }
}
