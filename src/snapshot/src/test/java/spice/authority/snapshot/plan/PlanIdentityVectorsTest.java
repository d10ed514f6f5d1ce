package spice.authority.snapshot.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.payload.PlanIdentity;

/** vectors/plan-identity.json as it is. */
class PlanIdentityVectorsTest {

    static Map<String, ToolDefinition> tools(JsonNode doc) {
        Map<String, ToolDefinition> byKey = new HashMap<>();
        for (JsonNode t : doc.get("tools")) {
            List<ToolDefinition.Capability> caps = new ArrayList<>();
            t.get("capabilities").forEach(c -> caps.add(ToolDefinition.Capability.fromWire(c.asText())));
            byKey.put(t.get("key").asText(), new ToolDefinition(t.get("name").asText(), t.get("description").asText(),
                    t.get("input_schema_utf8").asText().getBytes(StandardCharsets.UTF_8),
                    ToolDefinition.Effect.valueOf(t.get("effect").asText().toUpperCase()),
                    ToolDefinition.ReplaySafety.valueOf(t.get("replay_safety").asText().toUpperCase()), caps));
        }
        return byKey;
    }

    @Test
    void everyVector_fingerprintsPlanIdsAndPlanFingerprintsMatch() {
        JsonNode doc = SpecFiles.json("vectors/plan-identity.json");
        Map<String, ToolDefinition> byKey = tools(doc);
        List<String> failures = new ArrayList<>();
        for (JsonNode t : doc.get("tools")) {
            String got = PlanIdentities.toolFingerprint(byKey.get(t.get("key").asText()));
            if (!got.equals(t.get("fingerprint").asText())) {
                failures.add("tool " + t.get("key").asText());
            }
        }
        for (JsonNode s : doc.get("static_plan_ids")) {
            List<ToolDefinition> list = new ArrayList<>();
            s.get("tools").forEach(k -> list.add(byKey.get(k.asText())));
            if (!PlanIdentities.staticToolPlanId(list).equals(s.get("static_plan_id").asText())) {
                failures.add("static plan id " + s.get("tools"));
            }
        }
        for (JsonNode p : doc.get("plans")) {
            List<String> compiled = new ArrayList<>();
            p.get("compiled_identities").forEach(c -> compiled.add(c.asText()));
            List<ToolDefinition> list = new ArrayList<>();
            p.get("tools").forEach(k -> list.add(byKey.get(k.asText())));
            PlanIdentity id = PlanIdentities.planIdentity(compiled, p.get("tool_plan_id").asText(),
                    p.get("snapshot_compatibility_identity").asText(), list);
            if (!id.fingerprint().equals(p.get("fingerprint").asText())) {
                failures.add("plan " + p.get("first_used_by").asText());
            }
            if (!PlanIdentities.matches(id, list)) {
                failures.add("plan does not match itself " + p.get("first_used_by").asText());
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void definitionRules_refuseInconsistentTools() {
        byte[] schema = "{}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> new ToolDefinition("read", "d", schema, ToolDefinition.Effect.READ_ONLY,
                ToolDefinition.ReplaySafety.IDEMPOTENT, List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ToolDefinition("w", "d", schema, ToolDefinition.Effect.MUTATING,
                ToolDefinition.ReplaySafety.SAFE, List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ToolDefinition("r", "d", schema, ToolDefinition.Effect.READ_ONLY,
                ToolDefinition.ReplaySafety.SAFE, List.of(ToolDefinition.Capability.NETWORK_ACCESS)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ToolDefinition("r", "d", schema, ToolDefinition.Effect.READ_ONLY,
                ToolDefinition.ReplaySafety.SAFE, List.of(ToolDefinition.Capability.FILESYSTEM_READ, ToolDefinition.Capability.FILESYSTEM_READ)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ToolDefinition("r", "d", "{".getBytes(StandardCharsets.UTF_8), ToolDefinition.Effect.READ_ONLY,
                ToolDefinition.ReplaySafety.SAFE, List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ToolDefinition(" r", "d", schema, ToolDefinition.Effect.READ_ONLY,
                ToolDefinition.ReplaySafety.SAFE, List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
