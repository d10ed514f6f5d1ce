package spice.authority.snapshot.plan;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.LengthPrefixed;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.payload.PlanIdentity;

/**
 * Plan identity computation for Java hosts (wire-format.md b.4): tool definition fingerprints, the
 * static tool plan ID, and the combined plan fingerprint per format: {@code spice-agent-plan/v2}
 * for v1alpha2, {@code spice-agent-plan/v3} with the workspace fingerprint after the compatibility
 * identity for v1alpha3 (wire-format-v1alpha3.md section 4). All byte orders are Go's (UTF-8 bytes).
 * The methods without a format are v1alpha2's.
 */
public final class PlanIdentities {
    private PlanIdentities() {}

    /** Lowercase hex SHA-256 over LP(name), LP(description), LP(schema), LP(effect), LP(replay), LP(cap)… */
    public static String toolFingerprint(ToolDefinition d) {
        LengthPrefixed lp = new LengthPrefixed(256 + d.inputSchema().length)
                .add(d.name())
                .add(d.description())
                .add(d.inputSchema())
                .add(d.effect().wire())
                .add(d.replaySafety().wire());
        for (String c : d.sortedCapabilityNames()) {
            lp.add(c);
        }
        return GoText.hex(HmacSha256.sha256(lp.toByteArray()));
    }

    private static List<ToolDefinition> sortedByName(List<ToolDefinition> tools) {
        List<ToolDefinition> sorted = new ArrayList<>(tools);
        sorted.sort(Comparator.comparing(ToolDefinition::name, GoText::compareUtf8));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).name().equals(sorted.get(i - 1).name())) {
                throw new IllegalArgumentException("leased tool names must be unique");
            }
        }
        return sorted;
    }

    /** {@code static:} + hex SHA-256 over LP(name) LP(fingerprint) of each tool sorted by name. */
    public static String staticToolPlanId(List<ToolDefinition> tools) {
        LengthPrefixed lp = new LengthPrefixed(256);
        for (ToolDefinition d : sortedByName(tools)) {
            lp.add(d.name()).add(toolFingerprint(d));
        }
        return "static:" + GoText.hex(HmacSha256.sha256(lp.toByteArray()));
    }

    /** v1alpha2's {@link #planFingerprint(SnapshotFormat, List, String, String, String, List)}. */
    public static String planFingerprint(List<String> compiledIdentities, String toolPlanId,
                                         String compatibilityIdentity, List<ToolDefinition> tools) {
        return planFingerprint(SnapshotFormat.V1ALPHA2, compiledIdentities, toolPlanId, compatibilityIdentity, "", tools);
    }

    /**
     * {@code sha256:} + hex SHA-256 over LP(the format's plan domain), LP(each compiled identity in
     * list order), LP(tool plan ID), LP(compatibility identity), for v1alpha3 LP(workspace
     * fingerprint), then LP(name) LP(fingerprint) per tool sorted by name.
     *
     * @throws IllegalArgumentException a workspace fingerprint for a format without one
     */
    public static String planFingerprint(SnapshotFormat format, List<String> compiledIdentities, String toolPlanId,
                                         String compatibilityIdentity, String workspaceFingerprint,
                                         List<ToolDefinition> tools) {
        requireWorkspaceFits(format, workspaceFingerprint);
        LengthPrefixed lp = new LengthPrefixed(1024).add(format.planDomain());
        for (String c : compiledIdentities) {
            lp.add(c);
        }
        lp.add(toolPlanId).add(compatibilityIdentity);
        if (format.hasWorkspaceFingerprint()) {
            lp.add(workspaceFingerprint);
        }
        for (ToolDefinition d : sortedByName(tools)) {
            lp.add(d.name()).add(toolFingerprint(d));
        }
        return "sha256:" + GoText.hex(HmacSha256.sha256(lp.toByteArray()));
    }

    private static void requireWorkspaceFits(SnapshotFormat format, String workspaceFingerprint) {
        if (!format.hasWorkspaceFingerprint() && !workspaceFingerprint.isEmpty()) {
            throw new IllegalArgumentException(format.wire() + " has no workspace fingerprint");
        }
    }

    /** v1alpha2's {@link #planIdentity(SnapshotFormat, List, String, String, String, List)}. */
    public static PlanIdentity planIdentity(List<String> compiledIdentities, String toolPlanId,
                                            String compatibilityIdentity, List<ToolDefinition> tools) {
        return planIdentity(SnapshotFormat.V1ALPHA2, compiledIdentities, toolPlanId, compatibilityIdentity, "", tools);
    }

    /**
     * The full plan identity of {@code format} for a host's compiled beans, plan ID, compatibility,
     * workspace ({@code ""} for none) and tools.
     *
     * @throws IllegalArgumentException a workspace for v1alpha2, or one that breaks P-WORKSPACE
     *     (required in {@code sha256:} + 64 lowercase hex form when the compatibility identity is
     *     not empty), as the reference's plan constructor refuses it
     */
    public static PlanIdentity planIdentity(SnapshotFormat format, List<String> compiledIdentities, String toolPlanId,
                                            String compatibilityIdentity, String workspaceFingerprint,
                                            List<ToolDefinition> tools) {
        requireWorkspaceFits(format, workspaceFingerprint);
        if (format.hasWorkspaceFingerprint() && !PlanIdentity.workspaceAllowed(compatibilityIdentity, workspaceFingerprint)) {
            throw new IllegalArgumentException("workspace fingerprint must be sha256: followed by 64 lowercase hex digits, "
                    + "and is required when the compatibility identity is not empty");
        }
        List<String> sorted = new ArrayList<>(compiledIdentities);
        sorted.sort(GoText::compareUtf8);
        return new PlanIdentity(sorted, compatibilityIdentity, workspaceFingerprint, toolPlanId,
                planFingerprint(format, sorted, toolPlanId, compatibilityIdentity, workspaceFingerprint, tools));
    }

    /** v1alpha2's {@link #matches(SnapshotFormat, PlanIdentity, List)}. */
    public static boolean matches(PlanIdentity recorded, List<ToolDefinition> leasedTools) {
        return matches(SnapshotFormat.V1ALPHA2, recorded, leasedTools);
    }

    /**
     * Recomputes the {@code format} fingerprint for {@code recorded} (its workspace included) from
     * the tools the host leased now and compares in constant time (wire-format.md f.4). False for
     * a workspace under a format without one.
     */
    public static boolean matches(SnapshotFormat format, PlanIdentity recorded, List<ToolDefinition> leasedTools) {
        if (!format.hasWorkspaceFingerprint() && !recorded.workspaceFingerprint().isEmpty()) {
            return false;
        }
        String again = planFingerprint(format, recorded.compiledIdentities(), recorded.toolPlanId(),
                recorded.snapshotCompatibilityIdentity(), recorded.workspaceFingerprint(), leasedTools);
        return MessageDigest.isEqual(again.getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                recorded.fingerprint().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
