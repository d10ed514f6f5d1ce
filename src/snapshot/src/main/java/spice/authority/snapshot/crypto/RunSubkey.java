package spice.authority.snapshot.crypto;


/**
 * The per-run HMAC subkey of the OS-backed authority (wire-format.md c.2):
 * {@code HMAC-SHA256(master, LP(domain) || LP(scope) || LP(run ID) || LP(u64be(run generation)))}.
 */
public final class RunSubkey {
    /** The 36-byte domain string. */
    public static final String DOMAIN = "spice.agent.run-authority-run-key/v1";

    private RunSubkey() {}

    /** The HMAC input of the derivation (public values only). */
    public static byte[] derivationInput(byte[] scopeId, String runId, long runGeneration) {
        return new LengthPrefixed(160 + runId.length() * 3)
                .add(DOMAIN)
                .add(scopeId)
                .add(runId)
                .addU64(runGeneration)
                .toByteArray();
    }

    /**
     * Derives the subkey. The intermediate buffer is zeroed once copied into the returned key.
     */
    public static SecretKeyBytes derive(SecretKeyBytes master, byte[] scopeId, String runId, long runGeneration) {
        if (scopeId.length != 32) {
            throw new IllegalArgumentException("scope ID must be 32 bytes");
        }
        try (HmacSha256 mac = new HmacSha256(master)) {
            byte[] sub = mac.compute(derivationInput(scopeId, runId, runGeneration));
            return SecretKeyBytes.adopt(sub);
        }
    }

    /** Convenience: an {@link AuthorityKey} over the run subkey; the subkey itself is zeroed. */
    public static AuthorityKey authorityFor(SecretKeyBytes master, byte[] scopeId, long keyGeneration,
                                            String runId, long runGeneration) {
        try (SecretKeyBytes sub = derive(master, scopeId, runId, runGeneration)) {
            return new AuthorityKey(scopeId, keyGeneration, sub);
        }
    }
}
