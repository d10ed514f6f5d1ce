package spice.authority.app.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.SnapshotFormat;

class FormatsSettingTest {
    @Test
    void absentOrBlank_isTheStandardPolicy() {
        assertThat(FormatsSetting.policy(Optional.empty())).isSameAs(FormatPolicy.standard());
        assertThat(FormatsSetting.policy(Optional.of(" "))).isSameAs(FormatPolicy.standard());
    }

    @Test
    void aList_narrowsTheStandardPolicyToIt() {
        FormatPolicy v2 = FormatsSetting.policy(Optional.of("v1alpha2"));
        assertThat(v2.signing()).isEqualTo(Set.of(SnapshotFormat.V1ALPHA2));
        assertThat(v2.verification()).isEqualTo(Set.of(SnapshotFormat.V1ALPHA2));
        assertThat(v2.importing()).isEqualTo(Set.of(SnapshotFormat.V1ALPHA2));
        FormatPolicy v3 = FormatsSetting.policy(Optional.of(" spice.agent.snapshot/v1alpha3 "));
        assertThat(v3.signing()).isEqualTo(Set.of(SnapshotFormat.V1ALPHA3));
        assertThat(FormatsSetting.policy(List.of("v1alpha3", "v1alpha2")).signing())
                .isEqualTo(FormatPolicy.standard().signing());
    }

    @Test
    void anUnknownVersionOrNone_isRefusedAsAWhole() {
        assertThatThrownBy(() -> FormatsSetting.policy(Optional.of("v1alpha2,v1alpha9")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("\"v1alpha9\"")
                .hasMessageContaining(FormatsSetting.PROPERTY);
        assertThatThrownBy(() -> FormatsSetting.policy(Optional.of("V1ALPHA2")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FormatsSetting.policy(Optional.of(",")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
