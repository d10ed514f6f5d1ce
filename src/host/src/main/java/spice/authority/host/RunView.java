package spice.authority.host;

import java.util.Objects;

/**
 * A run as the helper shows it ({@code run_id}, {@code phase}, {@code run_generation},
 * {@code owned}, {@code fenced}); no secrets.
 *
 * @param phase one of {@code ACTIVE}, {@code SUSPENDED}, {@code IMPORTING}, {@code COMPLETED},
 *     {@code FAILED}, {@code CANCELLED} (kept as text: a newer helper may add one)
 * @param runGeneration unsigned 64-bit
 * @param fenced the run's last outcome is uncertain: nobody may act on it until the helper restarts
 */
public record RunView(String runId, String phase, long runGeneration, boolean owned, boolean fenced) {
    /** The phase of a run that executes; the only phase a lease is granted in. */
    public static final String ACTIVE = "ACTIVE";

    private static final java.util.Set<String> KNOWN_PHASES =
            java.util.Set.of(ACTIVE, "SUSPENDED", "IMPORTING", "COMPLETED", "FAILED", "CANCELLED");

    public RunView {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(phase, "phase");
        if (phase.isEmpty()) {
            throw new IllegalArgumentException("phase is empty");
        }
    }

    /**
     * The phase as text safe to print: one of the known phases, else {@code "an unknown phase"}
     * (the text came from the helper and is not echoed).
     */
    public String phaseText() {
        return KNOWN_PHASES.contains(phase) ? phase : "an unknown phase";
    }

    /** {@code runGeneration} as decimal text (it is unsigned). */
    public String runGenerationText() {
        return Long.toUnsignedString(runGeneration);
    }
}
