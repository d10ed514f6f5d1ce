package spice.authority.host.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.payload.PlanIdentity;

class ScriptedAgentTest {
    @Test
    void format_byVersionOnly() {
        assertThat(ScriptedAgent.format("v1alpha2")).isEqualTo(SnapshotFormat.V1ALPHA2);
        assertThat(ScriptedAgent.format("v1alpha3")).isEqualTo(SnapshotFormat.V1ALPHA3);
        for (String bad : new String[] {"V1ALPHA3", "spice.agent.snapshot/v1alpha3", "v1alpha9", ""}) {
            assertThatThrownBy(() -> ScriptedAgent.format(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void identity_v1alpha3HasTheDemoWorkspace_v1alpha2None() {
        assertThat(ScriptedAgent.identity(SnapshotFormat.V1ALPHA2)).isEqualTo(ScriptedAgent.IDENTITY);
        String ws = ScriptedAgent.identity(SnapshotFormat.V1ALPHA3).workspaceFingerprint();
        assertThat(ws).isEqualTo(ScriptedAgent.WORKSPACE);
        assertThat(PlanIdentity.workspaceAllowed(ScriptedAgent.IDENTITY.compatibilityIdentity(), ws)).isTrue();
    }
}
