package spice.authority.snapshot.contract;

import java.util.Optional;

/**
 * The stable problem codes of the helper API (ARCHITECTURE.md, wire-format.md e.5): the
 * {@code code} of every RFC 9457 problem body the helper sends, and what the host library
 * dispatches on. The one place these strings are spelled.
 *
 * <p><b>Guarantees.</b> {@link #wire()} is the exact string on the wire and never changes for a
 * constant; {@link #ofWire} knows exactly the strings of the constants.
 */
public enum ProblemCode {
    INVALID_REQUEST("invalid_request", "Invalid request"),
    INVALID_SNAPSHOT("invalid_snapshot", "Invalid snapshot"),
    VERIFICATION_FAILED("verification_failed", "Verification failed"),
    /**
     * An envelope, payload or record in a snapshot format the helper does not take (unknown, or
     * refused by its format policy); the detail names the format, which is public.
     */
    UNSUPPORTED_FORMAT("unsupported_format", "Unsupported snapshot format"),
    BUSY("busy", "Run busy"),
    STATE_CONFLICT("state_conflict", "State conflict"),
    UNCERTAIN("uncertain", "Outcome uncertain"),
    UNAVAILABLE("unavailable", "Authority unavailable"),
    CLOSING("closing", "Helper closing"),
    NOT_FOUND("not_found", "Not found"),
    UNAUTHORIZED("unauthorized", "Unauthorized"),
    CANCELLED("cancelled", "Cancelled");

    private final String wire;
    private final String title;

    ProblemCode(String wire, String title) {
        this.wire = wire;
        this.title = title;
    }

    /** The code as sent in a problem body's {@code code} (and its {@code type} URN). */
    public String wire() {
        return wire;
    }

    /** The problem body's {@code title}. */
    public String title() {
        return title;
    }

    /** The constant sent as {@code wire}; empty for a code this version does not know. */
    public static Optional<ProblemCode> ofWire(String wire) {
        for (ProblemCode c : values()) {
            if (c.wire.equals(wire)) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return wire;
    }
}
