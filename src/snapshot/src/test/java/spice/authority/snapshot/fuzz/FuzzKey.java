package spice.authority.snapshot.fuzz;

import java.util.Arrays;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.crypto.VerificationException;

/**
 * The fixed authority the envelope fuzz targets verify against: the master key, scope and
 * generations of vectors/envelope.json case {@code suspended-run-1}, with a per-run subkey derived
 * from the envelope's run ID (wire-format.md c.2), as the OS-backed authority does. Seed envelopes
 * are sealed with the same authority, so the fuzzer starts from inputs that verify.
 */
final class FuzzKey {
    static final long KEY_GENERATION = 1;
    static final long RUN_GENERATION = 1;
    private static final byte[] SCOPE = filled(0x01);
    private static final SecretKeyBytes MASTER = master();

    private FuzzKey() {}

    /** The run's authority; the caller closes it. */
    static AuthorityKey forRun(String runId) {
        return RunSubkey.authorityFor(MASTER, SCOPE, KEY_GENERATION, runId, RUN_GENERATION);
    }

    /** Keyed verification with the run's subkey; throws the single failure on any mismatch. */
    static void verify(ClaimInput input, Claim claim) throws VerificationException {
        try (AuthorityKey key = forRun(input.runId())) {
            key.verify(input, claim);
        }
    }

    private static SecretKeyBytes master() {
        byte[] m = filled(0x02);
        try {
            return SecretKeyBytes.copyOf(m, SecretAccess.grant());
        } finally {
            Arrays.fill(m, (byte) 0);
        }
    }

    private static byte[] filled(int b) {
        byte[] a = new byte[32];
        Arrays.fill(a, (byte) b);
        return a;
    }
}
