package spice.authority.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SnapshotFormatTest {
    @Test
    void fromWire_exactStringOnly() {
        assertThat(SnapshotFormat.fromWire("spice.agent.snapshot/v1alpha2")).contains(SnapshotFormat.V1ALPHA2);
        assertThat(SnapshotFormat.fromWire("spice.agent.snapshot/v1alpha3")).contains(SnapshotFormat.V1ALPHA3);
        for (String other : new String[] {"spice.agent.snapshot/v1alpha1", "Spice.agent.snapshot/v1alpha3",
                "spice.agent.snapshot/v1alpha3 ", "", "V1ALPHA3"}) {
            assertThat(SnapshotFormat.fromWire(other)).as(other).isEmpty();
        }
        assertThat(SnapshotFormat.fromWire(null)).isEmpty();
    }

    @Test
    void perFormatFacts() {
        assertThat(SnapshotFormat.V1ALPHA2.version()).isEqualTo("v1alpha2");
        assertThat(SnapshotFormat.V1ALPHA3.version()).isEqualTo("v1alpha3");
        assertThat(SnapshotFormat.V1ALPHA2.planDomain()).isEqualTo("spice-agent-plan/v2");
        assertThat(SnapshotFormat.V1ALPHA3.planDomain()).isEqualTo("spice-agent-plan/v3");
        assertThat(SnapshotFormat.V1ALPHA2.hasWorkspaceFingerprint()).isFalse();
        assertThat(SnapshotFormat.V1ALPHA3.hasWorkspaceFingerprint()).isTrue();
        assertThat(SnapshotFormat.V1ALPHA3.maxEnvelopeBytes()).isEqualTo(16_777_511);
        assertThat(SnapshotFormat.V1ALPHA2.maxEnvelopeBytes()).isEqualTo(spice.authority.snapshot.envelope.Envelope.MAX_ENCODED_BYTES);
        // both wire strings are 29 bytes: every length in the MAC input and the envelope stays the same
        assertThat(SnapshotFormat.V1ALPHA2.wire()).hasSize(29);
        assertThat(SnapshotFormat.V1ALPHA3.wire()).hasSize(29);
    }
}
