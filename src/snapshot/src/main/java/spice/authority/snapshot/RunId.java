package spice.authority.snapshot;

import java.util.Optional;
import spice.authority.snapshot.json.GoText;

/**
 * A run ID that every layer accepts (ARCHITECTURE.md "stricter" point 3, "one run-ID rule
 * everywhere"): valid Unicode text (no unpaired UTF-16 surrogate), a token of at most
 * {@value #MAX_BYTES} UTF-8 bytes (wire-format.md section 0: non-empty, no leading or trailing Go
 * white space), and no Go-control character anywhere. It is the payload rule P-RUNID, so a run
 * started with such an ID can always be suspended, and its generated IDs
 * ({@code <run_id>/message/<N>}) fit in 128 bytes.
 *
 * <p><b>Guarantees.</b> Valid from birth: {@link #RunId(String)} throws for any other text, with
 * {@link #RULE} as the message (never the text itself). Wider IDs exist only where the reference
 * reads them (envelope structure and MAC input, token(128); authority records written by another
 * implementation, token(128)): this project never creates a run with one.
 */
public record RunId(String value) {
    /** The largest run ID, in UTF-8 bytes. */
    public static final int MAX_BYTES = 96;

    /** The rule, as refusals name it. */
    public static final String RULE = "run_id must be a token of at most 96 UTF-8 bytes of valid Unicode text "
            + "without control characters";

    public RunId {
        if (!isValid(value)) {
            throw new IllegalArgumentException(RULE);
        }
    }

    /** Whether {@code s} is a valid run ID: the one rule, used by every check. */
    public static boolean isValid(String s) {
        // SECURITY: an unpaired surrogate has no exact UTF-8 encoding: "a\ud800", "a\udc00" and
        // "a?" would share one hashed file name and one MAC input.
        return s != null && GoText.isValidUnicode(s) && GoText.isToken(s, MAX_BYTES) && !GoText.containsGoControl(s);
    }

    /** The run ID, or empty when {@code s} breaks the rule. */
    public static Optional<RunId> parse(String s) {
        return isValid(s) ? Optional.of(new RunId(s)) : Optional.empty();
    }

    /** The ID itself (caller-supplied text: escape it before it reaches a log line). */
    @Override
    public String toString() {
        return value;
    }
}
