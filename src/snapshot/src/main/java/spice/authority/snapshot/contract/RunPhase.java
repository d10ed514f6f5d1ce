package spice.authority.snapshot.contract;

import java.util.Optional;

/**
 * The durable phase of a run (wire-format.md d.3, e.2): the one vocabulary of the authority's
 * records, the helper API's run views and the host library. Its {@link #name()} is the spelling
 * on disk and on the wire ({@code "ACTIVE"}, ...), exact and upper case.
 */
public enum RunPhase {
    ACTIVE, SUSPENDED, IMPORTING, COMPLETED, FAILED, CANCELLED;

    /** Tombstones: no further progress is possible. */
    public boolean isTerminal() {
        return this == COMPLETED || this == FAILED || this == CANCELLED;
    }

    /** Exact lookup of the wire spelling; empty for anything else (no case folding, no trimming). */
    public static Optional<RunPhase> parse(String s) {
        for (RunPhase p : values()) {
            if (p.name().equals(s)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** The phase a snapshot lifecycle number (1..4) maps to. */
    public static RunPhase ofLifecycle(int lifecycle) {
        return switch (lifecycle) {
            case 1 -> SUSPENDED;
            case 2 -> COMPLETED;
            case 3 -> FAILED;
            case 4 -> CANCELLED;
            default -> throw new IllegalArgumentException("lifecycle must be 1..4");
        };
    }
}
