package spice.authority.snapshot.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wire spelling of {@link RunPhase} is exact, and the lifecycle numbers map as the spec says. */
class RunPhaseTest {

    @Test
    void parse_exactSpellingOnly() {
        assertThat(Arrays.stream(RunPhase.values()).map(Enum::name))
                .containsExactly("ACTIVE", "SUSPENDED", "IMPORTING", "COMPLETED", "FAILED", "CANCELLED");
        for (RunPhase p : RunPhase.values()) {
            assertThat(RunPhase.parse(p.name())).contains(p);
        }
        for (String s : Arrays.asList("active", " ACTIVE", "ACTIVE ", "", "STOPPED", "Suspended", null)) {
            assertThat(RunPhase.parse(s)).as(String.valueOf(s)).isEmpty();
        }
    }

    @Test
    void terminal_exactlyTheTombstones() {
        assertThat(Arrays.stream(RunPhase.values()).filter(RunPhase::isTerminal))
                .containsExactly(RunPhase.COMPLETED, RunPhase.FAILED, RunPhase.CANCELLED);
    }

    @Test
    void ofLifecycle_oneToFour() {
        assertThat(List.of(1, 2, 3, 4).stream().map(RunPhase::ofLifecycle))
                .containsExactly(RunPhase.SUSPENDED, RunPhase.COMPLETED, RunPhase.FAILED, RunPhase.CANCELLED);
        for (int bad : new int[] {0, 5, -1}) {
            assertThatThrownBy(() -> RunPhase.ofLifecycle(bad)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
