package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.core.RunRecord;

/**
 * Run resources (ARCHITECTURE.md "Fixed names"): {@code run_id}, {@code phase},
 * {@code run_generation}, {@code owned}, plus {@code "fenced": true} for a run whose last outcome
 * is uncertain, which is then never {@code owned}, even while a session's lease still holds it.
 */
class RunViewTest {
    private static final RunRecord ACTIVE = new RunRecord("ab".repeat(32), 1, "run-1", 3, RunPhase.ACTIVE, null);

    private static String json(Dto.RunView v) {
        return new String(Json.bytes(v), StandardCharsets.UTF_8);
    }

    @Test
    void fencedRun_withALeaseStillHeld_isNotOwned_andSaysFenced() {
        Dto.RunView v = Dto.RunView.of(ACTIVE, true, true);
        assertThat(v.owned()).isFalse();
        assertThat(json(v)).isEqualTo("{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":3,\"owned\":false,\"fenced\":true}");
        assertThat(json(Dto.RunView.of(ACTIVE, false, true))).isEqualTo(json(v));
    }

    @Test
    void runThatIsNotFenced_hasNoFencedMember_andIsOwnedExactlyWhenALeaseIsHeld() {
        assertThat(json(Dto.RunView.of(ACTIVE, true, false)))
                .isEqualTo("{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":3,\"owned\":true}");
        assertThat(json(Dto.RunView.of(ACTIVE, false, false)))
                .isEqualTo("{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":3,\"owned\":false}");
    }

    @Test
    void ownedAndFenced_cannotBeBuilt() {
        assertThatThrownBy(() -> new Dto.RunView("run-1", "ACTIVE", BigInteger.ONE, true, true))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void unsignedGenerationsAndSequences_areWrittenExactly_onBothSidesOf2To63() {
        assertThat(json(new Dto.RunView("run-1", "ACTIVE", Dto.u64(Long.MAX_VALUE), false)))
                .contains("\"run_generation\":9223372036854775807,");
        assertThat(json(new Dto.RunView("run-1", "ACTIVE", Dto.u64(Long.MIN_VALUE), false)))
                .contains("\"run_generation\":9223372036854775808,");
        assertThat(new String(Json.bytes(new Dto.ImportView("i", "run-1", Dto.u64(0), Dto.u64(-2L))), StandardCharsets.UTF_8))
                .isEqualTo("{\"import\":\"i\",\"run_id\":\"run-1\",\"last_sequence\":0,\"next_sequence\":18446744073709551614}");
        assertThat(Dto.u64(7)).isEqualTo(BigInteger.valueOf(7));
        assertThat(Dto.u64(-1L)).isEqualTo(new BigInteger("18446744073709551615"));
    }
}
