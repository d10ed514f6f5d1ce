package spice.authority.core;

/**
 * Why a {@code run-*.state} entry is not a record of this authority, as a listing counts it
 * ({@link RecordListing#unreadableByReason()}). The names are stable, public and secret-free: a
 * count by reason says nothing of any key, MAC or record content.
 */
public enum UnreadableReason {
    /** Not a record file at all: not JSON of the record's shape, or a value its rules refuse. */
    MALFORMED("malformed"),
    /** Well formed, but its MAC is not this authority's record MAC over it (tampered, or another scope's key). */
    BAD_MAC("bad_mac"),
    /**
     * Its MAC verifies, but its snapshot format is one this build does not speak or this helper's
     * format policy does not accept for verification.
     */
    UNSUPPORTED_FORMAT("unsupported_format"),
    /** Its MAC verifies, but it names another scope or key generation, or a run ID wider than the one rule. */
    FOREIGN("foreign"),
    /** It verifies, but sits under the file name of another run (a renamed file). */
    MISNAMED("misnamed"),
    /** The entry breaks the directory's file rule: a symbolic link, the wrong type, owner, mode or size. */
    REFUSED_FILE("refused_file");

    private final String wire;

    UnreadableReason(String wire) {
        this.wire = wire;
    }

    /** The stable name, e.g. {@code bad_mac}. */
    public String wire() {
        return wire;
    }

    @Override
    public String toString() {
        return wire;
    }
}
