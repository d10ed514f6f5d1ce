package spice.authority.host.engine;

import java.io.IOException;

/**
 * An import failed after its consume point (RFC 0007: explicitly uncertain, never retried
 * automatically). The engine stopped and joined the committed run before releasing the import
 * transaction; the run never executed without an active lease. The run is IMPORTING (or ACTIVE)
 * at the helper and fenced; see the README's recovery section for the way out.
 */
public final class ImportUncertainException extends EngineException {
    private static final long serialVersionUID = 1L;
    private final String runId;

    ImportUncertainException(String runId, String message, IOException cause) {
        super(message, cause);
        this.runId = runId;
    }

    public String runId() {
        return runId;
    }
}
