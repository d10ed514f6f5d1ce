package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.plan.PlanIdentities;
import spice.authority.snapshot.plan.ToolDefinition;

class StaticToolPlanTest {
    private static Tool tool(String name, String schema) {
        ToolDefinition d = new ToolDefinition(name, "A tool.", schema.getBytes(StandardCharsets.UTF_8),
                ToolDefinition.Effect.READ_ONLY, ToolDefinition.ReplaySafety.SAFE, List.of());
        return Tool.of(d, (runId, callId, arguments) -> JsonValue.of("{}"));
    }

    @Test
    void staticId_isTheBuiltInDigest_andChangesWithADefinition() {
        List<Tool> tools = List.of(tool("a", "{}"), tool("b", "{}"));
        StaticToolPlan plan = StaticToolPlan.of(tools);
        assertThat(plan.currentPlanId()).isEqualTo(PlanIdentities.staticToolPlanId(
                List.of(tools.get(0).definition(), tools.get(1).definition())));
        assertThat(StaticToolPlan.of(List.of(tool("a", "{\"type\":\"object\"}"), tool("b", "{}"))).currentPlanId())
                .isNotEqualTo(plan.currentPlanId());
    }

    @Test
    void lease_onlyItsOwnId_countsLiveLeases_releaseIdempotent() throws Exception {
        StaticToolPlan plan = StaticToolPlan.named("generation-7", List.of(tool("a", "{}")));
        assertThatThrownBy(() -> plan.lease("generation-8")).isInstanceOf(ToolPlanSource.PlanUnavailableException.class);
        ToolPlanSource.Lease l = plan.lease("generation-7");
        assertThat(l.planId()).isEqualTo("generation-7");
        assertThat(plan.liveLeases()).isEqualTo(1);
        l.release();
        l.release();
        assertThat(plan.liveLeases()).isZero();
    }

    @Test
    void duplicateToolNames_refused() {
        assertThatThrownBy(() -> StaticToolPlan.named("p", List.of(tool("a", "{}"), tool("a", "[]"))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void engineIdentity_sortsCompiled_generatedNeedsCompatibility() {
        EngineIdentity id = EngineIdentity.generated("agent/v1", List.of("stage:kernel", "provider:x"));
        assertThat(id.compiledIdentities()).containsExactly("provider:x", "stage:kernel");
        assertThat(id.importable()).isTrue();
        assertThat(EngineIdentity.convenience().importable()).isFalse();
        assertThat(EngineIdentity.convenience().compiledIdentities()).containsExactly("broker:injected", "provider:injected", "stage:kernel");
        assertThatThrownBy(() -> EngineIdentity.generated("", List.of("stage:kernel"))).isInstanceOf(IllegalArgumentException.class);
    }
}
