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
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.payload.Snapshot;

/** vectors/plan-identity.json and vectors-v1alpha3/plan-identity.json as they are. */
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
    void everyV1alpha3Vector_fingerprintsPlanIdsAndV3PlanFingerprintsMatch_andTheCorpusCarriesThem() throws Exception {
        JsonNode doc = SpecFiles.json("vectors-v1alpha3/plan-identity.json");
        assertThat(doc.get("plan_domain").asText()).isEqualTo(SnapshotFormat.V1ALPHA3.planDomain());
        Map<String, ToolDefinition> byKey = tools(doc);
        List<String> failures = new ArrayList<>();
        for (JsonNode t : doc.get("tools")) {
            if (!PlanIdentities.toolFingerprint(byKey.get(t.get("key").asText())).equals(t.get("fingerprint").asText())) {
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
        int fromCorpus = 0;
        for (JsonNode p : doc.get("plans")) {
            String name = p.get("first_used_by").asText();
            List<String> compiled = new ArrayList<>();
            p.get("compiled_identities").forEach(c -> compiled.add(c.asText()));
            List<ToolDefinition> list = new ArrayList<>();
            p.get("tools").forEach(k -> list.add(byKey.get(k.asText())));
            String workspace = p.get("workspace_fingerprint").asText();
            PlanIdentity id = PlanIdentities.planIdentity(SnapshotFormat.V1ALPHA3, compiled, p.get("tool_plan_id").asText(),
                    p.get("snapshot_compatibility_identity").asText(), workspace, list);
            if (!id.fingerprint().equals(p.get("fingerprint").asText()) || !id.workspaceFingerprint().equals(workspace)) {
                failures.add("plan " + name);
            }
            if (!PlanIdentities.matches(SnapshotFormat.V1ALPHA3, id, list)) {
                failures.add("plan does not match itself " + name);
            }
            if (PlanIdentities.matches(SnapshotFormat.V1ALPHA2, id, list)) {
                failures.add("v3 plan matches as v2 " + name);
            }
            java.nio.file.Path corpus = SpecFiles.resolve("payload-corpus/v1alpha3/" + name + ".json");
            if (java.nio.file.Files.isRegularFile(corpus)) {
                fromCorpus++;
                PlanIdentity carried = Snapshot.decode(java.nio.file.Files.readAllBytes(corpus)).planIdentity();
                if (!carried.equals(id)) {
                    failures.add("corpus " + name + " carries another plan identity");
                }
            }
        }
        assertThat(fromCorpus).isGreaterThanOrEqualTo(8);
        assertThat(failures).isEmpty();
    }

    @Test
    void v1alpha3_workspaceOnlyDifference_changesTheFingerprint() {
        List<String> compiled = List.of("stage:kernel");
        String a = PlanIdentities.planFingerprint(SnapshotFormat.V1ALPHA3, compiled, "p", "c:1", "sha256:" + "0".repeat(64), List.of());
        String b = PlanIdentities.planFingerprint(SnapshotFormat.V1ALPHA3, compiled, "p", "c:1", "sha256:" + "1".repeat(64), List.of());
        String v2 = PlanIdentities.planFingerprint(compiled, "p", "c:1", List.of());
        assertThat(a).isNotEqualTo(b).isNotEqualTo(v2);
        // without a workspace, v3 still differs from v2 (domain and an empty LP)
        assertThat(PlanIdentities.planFingerprint(SnapshotFormat.V1ALPHA3, compiled, "p", "", "", List.of()))
                .isNotEqualTo(PlanIdentities.planFingerprint(compiled, "p", "", List.of()));
    }

    @Test
    void planIdentity_workspaceRules_refusedAtConstruction() {
        String ws = "sha256:" + "a".repeat(64);
        assertThatThrownBy(() -> PlanIdentities.planIdentity(SnapshotFormat.V1ALPHA2, List.of("stage:kernel"), "p", "c:1", ws, List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("v1alpha2 has no workspace");
        assertThatThrownBy(() -> PlanIdentities.planIdentity(SnapshotFormat.V1ALPHA3, List.of("stage:kernel"), "p", "c:1", "", List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("required");
        assertThatThrownBy(() -> PlanIdentities.planIdentity(SnapshotFormat.V1ALPHA3, List.of("stage:kernel"), "p", "", "SHA256:x", List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(PlanIdentities.planIdentity(SnapshotFormat.V1ALPHA3, List.of("stage:kernel"), "p", "", "", List.of())
                .workspaceFingerprint()).isEmpty();
        assertThat(PlanIdentity.isWorkspaceFingerprint(ws)).isTrue();
        assertThat(PlanIdentity.isWorkspaceFingerprint(ws + " ")).isFalse();
        assertThat(PlanIdentity.isWorkspaceFingerprint(null)).isFalse();
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
