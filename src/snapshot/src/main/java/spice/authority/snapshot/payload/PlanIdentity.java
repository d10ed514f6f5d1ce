package spice.authority.snapshot.payload;

import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.json.GoText;

/**
 * The combined plan identity (wire-format.md b.4; wire-format-v1alpha3.md sections 3–4): sorted
 * compiled identities, the snapshot-compatibility identity ({@code ""} means deliberately not
 * importable), the workspace fingerprint (v1alpha3; {@code ""} for none, and always {@code ""} in
 * a v1alpha2 snapshot), the exact tool plan ID, and the {@code sha256:} fingerprint over all of
 * them and the leased tool definitions. Components are in wire order.
 */
public record PlanIdentity(List<String> compiledIdentities, String snapshotCompatibilityIdentity,
                           String workspaceFingerprint, String toolPlanId, String fingerprint) {
    private static final String SHA256 = "sha256:";

    public PlanIdentity {
        compiledIdentities = List.copyOf(compiledIdentities);
        Objects.requireNonNull(snapshotCompatibilityIdentity, "snapshotCompatibilityIdentity");
        Objects.requireNonNull(workspaceFingerprint, "workspaceFingerprint");
        Objects.requireNonNull(toolPlanId, "toolPlanId");
        Objects.requireNonNull(fingerprint, "fingerprint");
    }

    /** A plan identity without a workspace fingerprint (every v1alpha2 plan). */
    public PlanIdentity(List<String> compiledIdentities, String snapshotCompatibilityIdentity, String toolPlanId,
                        String fingerprint) {
        this(compiledIdentities, snapshotCompatibilityIdentity, "", toolPlanId, fingerprint);
    }

    /**
     * The form of a workspace fingerprint: exactly {@code sha256:} followed by 64 lowercase hex
     * digits (wire-format-v1alpha3.md section 3). Only the form: {@code sha256:000…0} passes.
     */
    public static boolean isWorkspaceFingerprint(String s) {
        return s != null && s.startsWith(SHA256) && GoText.isLowerHex(s.substring(SHA256.length()), 64);
    }

    /**
     * Rule P-WORKSPACE: the workspace fingerprint is required (in {@link #isWorkspaceFingerprint}
     * form) when the compatibility identity is not empty; otherwise it is {@code ""} or in that form.
     */
    public static boolean workspaceAllowed(String compatibilityIdentity, String workspaceFingerprint) {
        if (workspaceFingerprint.isEmpty() && compatibilityIdentity.isEmpty()) {
            return true;
        }
        return isWorkspaceFingerprint(workspaceFingerprint);
    }
}
