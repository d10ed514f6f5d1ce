package spice.authority.core;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.json.GoText;

/**
 * The signed per-run record (wire-format.md d.3): scope, authority key generation, run ID, run
 * (transition) generation, phase, and for SUSPENDED the bound snapshot claim.
 *
 * <p><b>Guarantees.</b> Valid from birth: version 1, lowercase 64-hex scope, key generation and
 * run generation at least 1, run ID valid Unicode text and a token(128) without Go-control
 * characters ({@link #validRunId}), a snapshot binding present exactly when the phase is
 * SUSPENDED. Immutable. {@link #toString()} shows no MACs.
 */
public record RunRecord(String scopeIdHex, long keyGeneration, String runId, long runGeneration, RunPhase phase,
                        SnapshotBinding snapshot) {

    /** The record version written and accepted. */
    public static final int VERSION = 1;

    public RunRecord {
        Objects.requireNonNull(phase, "phase");
        if (scopeIdHex == null || !GoText.isLowerHex(scopeIdHex, 64)) {
            throw new IllegalArgumentException("scope must be 64 lowercase hex digits");
        }
        if (keyGeneration == 0 || runGeneration == 0) {
            throw new IllegalArgumentException("generations must be at least 1");
        }
        if (!validRunId(runId)) {
            throw new IllegalArgumentException("run ID must be valid Unicode text, a token of at most 128 bytes, "
                    + "without control characters");
        }
        if ((phase == RunPhase.SUSPENDED) != (snapshot != null)) {
            throw new IllegalArgumentException("a snapshot binding is present exactly for SUSPENDED");
        }
    }

    /**
     * The store's reading rule for a record's run ID (wire-format.md d.3, record decoding): valid
     * Unicode text, token(128) and no Go-control character anywhere. Wider than the one run-ID
     * rule ({@link spice.authority.snapshot.RunId}, 96 bytes) so that a record written by another
     * implementation under a longer ID still decodes; {@link RunAuthority} then treats it as
     * foreign and never acts on it, and never creates one.
     */
    public static boolean validRunId(String runId) {
        // SECURITY: an unpaired surrogate has no exact UTF-8 encoding: "a\ud800", "a\udc00" and
        // "a?" would share one hashed file name and one MAC input, and the record could never be
        // verified, named or abandoned again.
        return runId != null && GoText.isValidUnicode(runId) && GoText.isToken(runId, 128)
                && !GoText.containsGoControl(runId);
    }

    /** The same record at another phase and generation, without a snapshot binding. */
    RunRecord with(RunPhase newPhase, long newGeneration) {
        return new RunRecord(scopeIdHex, keyGeneration, runId, newGeneration, newPhase, null);
    }

    @Override
    public String toString() {
        return "RunRecord[run_id=" + runId + ", run_generation=" + Long.toUnsignedString(runGeneration) + ", phase="
                + phase + (snapshot == null ? "" : ", last_sequence=" + Long.toUnsignedString(snapshot.lastSequence())) + "]";
    }

    /**
     * The snapshot claim a SUSPENDED record binds: the format it was signed in (wire-format-v1alpha3.md
     * section 7: the signed input's, never converted), last sequence, lifecycle 1, payload digest
     * and the claim's HMAC.
     */
    public record SnapshotBinding(SnapshotFormat format, long lastSequence, int lifecycle, byte[] payloadSha256,
                                  byte[] authorityHmac) {

        public SnapshotBinding {
            Objects.requireNonNull(format, "format");
            if (lastSequence == 0 || lastSequence == -1L) {
                throw new IllegalArgumentException("last sequence must be 1..2^64-2");
            }
            if (lifecycle != 1) {
                throw new IllegalArgumentException("a bound snapshot is SUSPENDED (lifecycle 1)");
            }
            if (payloadSha256 == null || payloadSha256.length != 32 || authorityHmac == null || authorityHmac.length != 32) {
                throw new IllegalArgumentException("digest and HMAC must be 32 bytes");
            }
            payloadSha256 = payloadSha256.clone();
            authorityHmac = authorityHmac.clone();
        }

        @Override
        public byte[] payloadSha256() {
            return payloadSha256.clone();
        }

        @Override
        public byte[] authorityHmac() {
            return authorityHmac.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SnapshotBinding b && format == b.format && lastSequence == b.lastSequence && lifecycle == b.lifecycle
                    && Arrays.equals(payloadSha256, b.payloadSha256)
                    && java.security.MessageDigest.isEqual(authorityHmac, b.authorityHmac);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(payloadSha256);
        }

        @Override
        public String toString() {
            return "SnapshotBinding[format=" + format.wire() + ", last_sequence=" + Long.toUnsignedString(lastSequence) + ", payload_sha256="
                    + HexFormat.of().formatHex(payloadSha256) + ", authority_hmac_sha256=<32 bytes>]";
        }
    }
}
