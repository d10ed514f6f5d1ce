package spice.authority.host;

import java.util.Objects;

/**
 * A prepared import: the helper verified the envelope and holds the run's lock for this session's
 * import transaction. {@code nextSequence} is where the resumed run continues.
 *
 * <p>Guarantees: {@link #toString()} shows the run and sequences; the import id is a handle only
 * the opening session can use, shown as-is since it grants nothing alone.
 */
public record ImportView(String importId, String runId, long lastSequence, long nextSequence) {
    public ImportView {
        Objects.requireNonNull(importId, "importId");
        Objects.requireNonNull(runId, "runId");
        if (importId.isEmpty()) {
            throw new IllegalArgumentException("importId is empty");
        }
    }
}
