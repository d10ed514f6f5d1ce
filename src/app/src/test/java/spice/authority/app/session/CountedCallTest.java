package spice.authority.app.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.core.AuthorityException;

/**
 * A transition's count comes after the session recorded its result, and can fail nothing: a
 * metric that throws (out of memory) between an activate and the session owning the lease would
 * leave the run locked until restart, and would turn a refusal into an unknown outcome.
 */
class CountedCallTest {
    private final List<String> counted = new ArrayList<>();
    private final List<String> kept = new ArrayList<>();

    private void throwingCount(String result) {
        counted.add(result);
        throw new OutOfMemoryError("metric");
    }

    @Test
    void countThatThrows_afterATransition_theResultIsStillKeptAndAnswered() throws AuthorityException {
        String answer = RunLeases.countedCall(() -> "lease", t -> {
            kept.add(t);
            return t + " owned";
        }, this::throwingCount);

        assertThat(answer).isEqualTo("lease owned");
        assertThat(kept).containsExactly("lease");
        assertThat(counted).containsExactly("ok");
    }

    @Test
    void countThatThrows_afterARefusal_theRefusalIsTheAnswer() {
        assertThatThrownBy(() -> RunLeases.countedCall(() -> {
            throw new AuthorityException.Busy("run r is owned by a live process");
        }, t -> {
            kept.add("never");
            return t;
        }, this::throwingCount)).isInstanceOf(AuthorityException.Busy.class).hasMessageContaining("live process");

        assertThat(kept).isEmpty();
        assertThat(counted).containsExactly("busy");
    }

    @Test
    void keepThatRefuses_theTransitionIsStillCountedOk_andTheRefusalPropagates() {
        IllegalStateException refused = new IllegalStateException("session closed while the call ran");
        assertThatThrownBy(() -> RunLeases.countedCall(() -> "lease", t -> {
            throw refused;
        }, counted::add)).isSameAs(refused);

        assertThat(counted).containsExactly("ok");
    }
}
