package spice.authority.snapshot.payload;

import java.util.List;
import java.util.Objects;

/**
 * The combined plan identity (wire-format.md b.4): sorted compiled identities, the
 * snapshot-compatibility identity ({@code ""} means deliberately not importable), the exact tool
 * plan ID, and the {@code sha256:} fingerprint over all of them and the leased tool definitions.
 */
public record PlanIdentity(List<String> compiledIdentities, String snapshotCompatibilityIdentity,
                           String toolPlanId, String fingerprint) {
    public PlanIdentity {
        compiledIdentities = List.copyOf(compiledIdentities);
        Objects.requireNonNull(snapshotCompatibilityIdentity, "snapshotCompatibilityIdentity");
        Objects.requireNonNull(toolPlanId, "toolPlanId");
        Objects.requireNonNull(fingerprint, "fingerprint");
    }
}
