package spice.authority.host;

import java.util.Objects;
import spice.authority.snapshot.contract.RunPhase;

/**
 * A run as the helper shows it ({@code run_id}, {@code phase}, {@code run_generation},
 * {@code owned}, {@code fenced}); no secrets.
 *
 * @param phase the run's phase; the client refuses an answer with any other spelling as a
 *     protocol error, so no phase it does not know reaches a caller
 * @param runGeneration unsigned 64-bit
 * @param fenced the run's last outcome is uncertain: nobody may act on it until the helper restarts
 */
public record RunView(String runId, RunPhase phase, long runGeneration, boolean owned, boolean fenced) {

    public RunView {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(phase, "phase");
    }

    /** {@code runGeneration} as decimal text (it is unsigned). */
    public String runGenerationText() {
        return Long.toUnsignedString(runGeneration);
    }
}
