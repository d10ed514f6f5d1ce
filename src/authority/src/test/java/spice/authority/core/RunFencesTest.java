package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;

/** {@link RunFences}: a fence is never lifted, and keeps the first attempted record. */
class RunFencesTest {
    private static final String SCOPE = "ab".repeat(32);
    private static final RunId RUN = new RunId("run-1");

    private static RunRecord record(String runId, long generation, RunPhase phase) {
        return new RunRecord(SCOPE, 1, runId, generation, phase, null);
    }

    @Test
    void unfenced_passes_fenced_isUncertainNamingTheRun() throws Exception {
        RunFences fences = new RunFences();
        assertThat(fences.isFenced(RUN)).isFalse();
        fences.check(RUN);
        assertThat(fences.attempted(RUN)).isEmpty();

        fences.fence(RUN, record("run-1", 1, RunPhase.ACTIVE));
        assertThat(fences.isFenced(RUN)).isTrue();
        assertThat(fences.isFenced(new RunId("run-2"))).isFalse();
        assertThatThrownBy(() -> fences.check(RUN)).isInstanceOf(AuthorityException.Uncertain.class)
                .hasMessageStartingWith("run run-1 is uncertain in this process");
    }

    @Test
    void theFirstAttemptedRecordIsKept_andAllIsACopy() {
        RunFences fences = new RunFences();
        RunRecord first = record("run-1", 2, RunPhase.ACTIVE);
        fences.fence(RUN, first);
        fences.fence(RUN, record("run-1", 2, RunPhase.CANCELLED));
        assertThat(fences.attempted(RUN)).containsSame(first);

        Map<RunId, RunRecord> all = fences.all();
        assertThat(all).containsExactly(Map.entry(RUN, first));
        fences.fence(new RunId("run-2"), record("run-2", 1, RunPhase.ACTIVE));
        assertThat(all).hasSize(1);
        assertThat(fences.all()).containsOnlyKeys(RUN, new RunId("run-2"));
    }
}
