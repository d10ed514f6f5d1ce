package spice.authority.snapshot.payload;

/**
 * The payload's safe lifecycle status and its envelope {@code SnapshotLifecycle} number
 * (wire-format.md a.1, b.1).
 */
public enum LifecycleStatus {
    SUSPENDED("suspended", 1),
    COMPLETED("completed", 2),
    FAILED("failed", 3),
    CANCELLED("cancelled", 4);

    private final String wire;
    private final int lifecycleNumber;

    LifecycleStatus(String wire, int lifecycleNumber) {
        this.wire = wire;
        this.lifecycleNumber = lifecycleNumber;
    }

    /** The payload spelling, e.g. {@code suspended}. */
    public String wire() {
        return wire;
    }

    /** The {@code SnapshotLifecycle} enum number (1..4). */
    public int lifecycleNumber() {
        return lifecycleNumber;
    }

    public boolean isTerminal() {
        return this != SUSPENDED;
    }

    /** Exact, case-sensitive lookup; null when the text is not a safe status. */
    public static LifecycleStatus fromWire(String s) {
        for (LifecycleStatus v : values()) {
            if (v.wire.equals(s)) {
                return v;
            }
        }
        return null;
    }

    /** Lookup by envelope lifecycle number; null for 0 and unknown numbers. */
    public static LifecycleStatus fromLifecycleNumber(int n) {
        for (LifecycleStatus v : values()) {
            if (v.lifecycleNumber == n) {
                return v;
            }
        }
        return null;
    }
}
