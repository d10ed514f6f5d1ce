package spice.authority.app.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import spice.authority.app.runtime.FormatsSetting;
import spice.authority.core.UnreadableReason;

/** The start-up lines of {@link ServeApplication}: the formats taken, and unreadable records by reason (counts only). */
class StartLinesTest {
    @Test
    void formatsLine_namesTheVersionsOfEachUse() {
        assertThat(ServeApplication.formatsLine(FormatsSetting.policy(Optional.of("v1alpha2"))))
                .isEqualTo("snapshot formats: signing v1alpha2; verification v1alpha2; import v1alpha2");
        assertThat(ServeApplication.formatsLine(FormatsSetting.policy(Optional.empty())))
                .isEqualTo("snapshot formats: signing v1alpha2, v1alpha3; verification v1alpha2, v1alpha3; import v1alpha2, v1alpha3");
    }

    @Test
    void unreadableLine_countsByReasonOnly() {
        Map<UnreadableReason, Integer> counts = new EnumMap<>(UnreadableReason.class);
        counts.put(UnreadableReason.BAD_MAC, 2);
        counts.put(UnreadableReason.UNSUPPORTED_FORMAT, 1);
        assertThat(ServeApplication.unreadableLine(counts))
                .startsWith("3 record file(s) in the authority directory not readable at start, by reason: "
                        + "bad_mac=2, unsupported_format=1");
    }
}
