package spice.authority.snapshot.crypto;

import java.util.Arrays;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.json.GoText;

/**
 * What a signer signs and a verifier checks (wire-format.md a.4 step 4): format, run ID, last
 * sequence, lifecycle number and the payload SHA-256.
 *
 * <p><b>Guarantees.</b> Valid from birth per c.1: a known {@link SnapshotFormat}, whose wire
 * string is the MAC input's format component (so a claim made for one format never verifies for
 * another), run ID a token(128), sequence in
 * 1..2^64−2 (unsigned), lifecycle 1..4, digest of 32 bytes; the run ID is also valid Unicode text
 * (no unpaired surrogate), so its UTF-8 bytes in the MAC input are exactly the run ID. Immutable
 * (the digest is copied).
 */
public final class ClaimInput {
    private final SnapshotFormat format;
    private final String runId;
    private final long lastSequence;
    private final int lifecycle;
    private final byte[] sha256;

    /**
     * A claim input for the format named by its exact wire string.
     *
     * @throws IllegalArgumentException for text that names no {@link SnapshotFormat}, or any
     *     other value the canonical input cannot carry
     */
    public ClaimInput(String format, String runId, long lastSequence, int lifecycle, byte[] sha256) {
        this(SnapshotFormat.fromWire(format).orElseThrow(
                () -> new IllegalArgumentException("format must be a known snapshot format")), runId, lastSequence, lifecycle, sha256);
    }

    public ClaimInput(SnapshotFormat format, String runId, long lastSequence, int lifecycle, byte[] sha256) {
        if (format == null) {
            throw new IllegalArgumentException("format must be a known snapshot format");
        }
        if (runId == null || !GoText.isToken(runId, 128) || !GoText.isValidUnicode(runId)) {
            throw new IllegalArgumentException("run ID must be valid Unicode text and a token of at most 128 bytes");
        }
        if (lastSequence == 0 || lastSequence == -1L) {
            throw new IllegalArgumentException("last sequence must be 1..2^64-2");
        }
        if (lifecycle < 1 || lifecycle > 4) {
            throw new IllegalArgumentException("lifecycle must be 1..4");
        }
        if (sha256 == null || sha256.length != 32) {
            throw new IllegalArgumentException("payload digest must be 32 bytes");
        }
        this.format = format;
        this.runId = runId;
        this.lastSequence = lastSequence;
        this.lifecycle = lifecycle;
        this.sha256 = sha256.clone();
    }

    /** The format's wire string (the MAC input's format component). */
    public String format() {
        return format.wire();
    }

    public SnapshotFormat snapshotFormat() {
        return format;
    }

    public String runId() {
        return runId;
    }

    public long lastSequence() {
        return lastSequence;
    }

    public int lifecycle() {
        return lifecycle;
    }

    public byte[] sha256() {
        return sha256.clone();
    }

    /**
     * The canonical MAC input of c.1 for a claim of {@code scopeId} at key {@code generation}:
     * eight LP components, 205 + len(run ID) bytes.
     */
    public byte[] canonicalMacInput(byte[] scopeId, long generation) {
        if (scopeId == null || scopeId.length != 32) {
            throw new IllegalArgumentException("scope ID must be 32 bytes");
        }
        if (generation == 0) {
            throw new IllegalArgumentException("generation must be at least 1");
        }
        return new LengthPrefixed(256 + runId.length() * 3)
                .add(AuthorityKey.DOMAIN)
                .add(scopeId)
                .addU64(generation)
                .add(format.wire())
                .add(runId)
                .addU64(lastSequence)
                .addU32(lifecycle)
                .add(sha256)
                .toByteArray();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClaimInput c && format == c.format && runId.equals(c.runId) && lastSequence == c.lastSequence
                && lifecycle == c.lifecycle && Arrays.equals(sha256, c.sha256);
    }

    @Override
    public int hashCode() {
        return runId.hashCode() * 31 + Arrays.hashCode(sha256);
    }

    @Override
    public String toString() {
        return "ClaimInput[format=" + format.wire() + ", run_id=" + runId + ", last_sequence=" + Long.toUnsignedString(lastSequence)
                + ", lifecycle=" + lifecycle + ", sha256=" + GoText.hex(sha256) + "]";
    }
}
