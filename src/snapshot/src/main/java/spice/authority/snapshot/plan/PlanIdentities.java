package spice.authority.snapshot.plan;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.LengthPrefixed;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.payload.PlanIdentity;

/**
 * Plan identity computation for Java hosts (wire-format.md b.4): tool definition fingerprints, the
 * static tool plan ID, and the combined plan fingerprint. All byte orders are Go's (UTF-8 bytes).
 */
public final class PlanIdentities {
    /** Domain of the plan fingerprint. */
    public static final String PLAN_DOMAIN = "spice-agent-plan/v2";

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

    /**
     * {@code sha256:} + hex SHA-256 over LP(domain), LP(each compiled identity in list order),
     * LP(tool plan ID), LP(compatibility identity), then LP(name) LP(fingerprint) per tool sorted
     * by name.
     */
    public static String planFingerprint(List<String> compiledIdentities, String toolPlanId,
                                         String compatibilityIdentity, List<ToolDefinition> tools) {
        LengthPrefixed lp = new LengthPrefixed(1024).add(PLAN_DOMAIN);
        for (String c : compiledIdentities) {
            lp.add(c);
        }
        lp.add(toolPlanId).add(compatibilityIdentity);
        for (ToolDefinition d : sortedByName(tools)) {
            lp.add(d.name()).add(toolFingerprint(d));
        }
        return "sha256:" + GoText.hex(HmacSha256.sha256(lp.toByteArray()));
    }

    /** The full plan identity for a host's compiled beans, plan ID, compatibility and tools. */
    public static PlanIdentity planIdentity(List<String> compiledIdentities, String toolPlanId,
                                            String compatibilityIdentity, List<ToolDefinition> tools) {
        List<String> sorted = new ArrayList<>(compiledIdentities);
        sorted.sort(GoText::compareUtf8);
        return new PlanIdentity(sorted, compatibilityIdentity, toolPlanId,
                planFingerprint(sorted, toolPlanId, compatibilityIdentity, tools));
    }

    /**
     * Recomputes the fingerprint for {@code recorded} from the tools the host leased now and
     * compares in constant time (wire-format.md f.4).
     */
    public static boolean matches(PlanIdentity recorded, List<ToolDefinition> leasedTools) {
        String again = planFingerprint(recorded.compiledIdentities(), recorded.toolPlanId(),
                recorded.snapshotCompatibilityIdentity(), leasedTools);
        return MessageDigest.isEqual(again.getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                recorded.fingerprint().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
