package spice.authority.core;

/** The durable phase of a run record (wire-format.md d.3, e.2). */
public enum Phase {
    ACTIVE, SUSPENDED, IMPORTING, COMPLETED, FAILED, CANCELLED;

    /** Tombstones: no further progress is possible. */
    public boolean isTerminal() {
        return this == COMPLETED || this == FAILED || this == CANCELLED;
    }

    /** Exact lookup of the record spelling; null for anything else. */
    static Phase fromWire(String s) {
        for (Phase p : values()) {
            if (p.name().equals(s)) {
                return p;
            }
        }
        return null;
    }

    /** The phase a snapshot lifecycle number (1..4) maps to. */
    static Phase ofLifecycle(int lifecycle) {
        return switch (lifecycle) {
            case 1 -> SUSPENDED;
            case 2 -> COMPLETED;
            case 3 -> FAILED;
            case 4 -> CANCELLED;
            default -> throw new IllegalArgumentException("lifecycle must be 1..4");
        };
    }
}
