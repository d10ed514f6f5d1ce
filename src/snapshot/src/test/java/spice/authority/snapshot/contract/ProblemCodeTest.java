package spice.authority.snapshot.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ProblemCodeTest {
    @Test
    void everyCodeRoundTripsThroughItsWireString() {
        for (ProblemCode c : ProblemCode.values()) {
            assertThat(ProblemCode.ofWire(c.wire())).contains(c);
            assertThat(c.wire()).matches("[a-z_]+");
            assertThat(c.title()).isNotBlank();
        }
    }

    @Test
    void theWireStringsAreTheApisStableCodes() {
        assertThat(Arrays.stream(ProblemCode.values()).map(ProblemCode::wire)).containsExactly(
                "invalid_request", "invalid_snapshot", "verification_failed", "unsupported_format", "busy", "state_conflict", "uncertain",
                "unavailable", "closing", "not_found", "unauthorized", "cancelled");
    }

    @Test
    void anUnknownCodeIsNone() {
        assertThat(ProblemCode.ofWire("Busy")).isEmpty();
        assertThat(ProblemCode.ofWire("")).isEmpty();
        assertThat(ProblemCode.ofWire(null)).isEmpty();
    }
}
