package spice.authority.snapshot;

import java.util.Optional;

/**
 * The snapshot formats this project speaks: the payload {@code version}, the envelope
 * {@code format} and the MAC input's format component are the same wire string
 * (wire-format.md a.3, b.5, c.1; wire-format-v1alpha3.md section 1).
 *
 * <p><b>Guarantees.</b> {@link #fromWire} matches the exact wire string only (no folding, no
 * trimming); any other text is no format, and the caller names it. Which formats a deployment
 * accepts for signing, verification and import is {@link FormatPolicy}'s business, not this type's.
 */
public enum SnapshotFormat {
    /** The format of the reference at 72c4c9f. */
    V1ALPHA2("spice.agent.snapshot/v1alpha2", "spice-agent-plan/v2", false, (16 << 20) + 1024),
    /**
     * The format of the reference at dfea7f8: {@code plan_identity.workspace_fingerprint}, rule
     * P-WORKSPACE, plan domain v3, whole-envelope cap of 16 MiB + 295 bytes.
     */
    V1ALPHA3("spice.agent.snapshot/v1alpha3", "spice-agent-plan/v3", true, (16 << 20) + 295);

    private final String wire;
    private final String planDomain;
    private final boolean workspace;
    private final int maxEnvelopeBytes;

    SnapshotFormat(String wire, String planDomain, boolean workspace, int maxEnvelopeBytes) {
        this.wire = wire;
        this.planDomain = planDomain;
        this.workspace = workspace;
        this.maxEnvelopeBytes = maxEnvelopeBytes;
    }

    /** The wire string, e.g. {@code spice.agent.snapshot/v1alpha3}. */
    public String wire() {
        return wire;
    }

    /** The version part of the wire string, e.g. {@code v1alpha3} (for display and media types). */
    public String version() {
        return wire.substring(wire.lastIndexOf('/') + 1);
    }

    /** The domain of the plan fingerprint hash ({@code spice-agent-plan/v2} or {@code /v3}). */
    public String planDomain() {
        return planDomain;
    }

    /** Whether the payload carries {@code plan_identity.workspace_fingerprint} (v1alpha3 and later). */
    public boolean hasWorkspaceFingerprint() {
        return workspace;
    }

    /**
     * The largest encoded envelope of this format: 16 MiB + 295 bytes for v1alpha3 (its reference
     * cap, wire-format-v1alpha3.md section 6); for v1alpha2, which has none, this project's parse
     * bound of 16 MiB + 1 KiB.
     */
    public int maxEnvelopeBytes() {
        return maxEnvelopeBytes;
    }

    /** The format whose wire string is exactly {@code wire}; empty for any other text or null. */
    public static Optional<SnapshotFormat> fromWire(String wire) {
        for (SnapshotFormat f : values()) {
            if (f.wire.equals(wire)) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /**
     * The format a canonical payload names: its {@code version} is the first member of the
     * canonical encoding (wire-format.md b.2), so the payload begins with it. Empty for anything
     * else; this reads the head only and validates nothing.
     */
    public static Optional<SnapshotFormat> ofCanonicalPayload(byte[] payload) {
        for (SnapshotFormat f : values()) {
            byte[] head = ("{\"version\":\"" + f.wire + "\"").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            if (payload.length > head.length && java.util.Arrays.equals(payload, 0, head.length, head, 0, head.length)) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return wire;
    }
}
