package spice.authority.host.engine;

import java.io.IOException;

/**
 * An import failed after its consume point (RFC 0007: explicitly uncertain, never retried
 * automatically). The engine stopped and joined the committed run before releasing the import
 * transaction; the run never executed without an active lease. The run is IMPORTING (or ACTIVE)
 * at the helper and fenced; see docs/host-library.md for the way out.
 */
public final class ImportUncertainException extends EngineException {
    private static final long serialVersionUID = 1L;
    private final String runId;
    private final LeaseHandBack leaseHandBack;

    ImportUncertainException(String runId, String message, IOException cause) {
        this(runId, message, cause, LeaseHandBack.NONE);
    }

    ImportUncertainException(String runId, String message, IOException cause, LeaseHandBack leaseHandBack) {
        super(message, cause);
        this.runId = runId;
        this.leaseHandBack = leaseHandBack;
    }

    /** Whether the engine handed back a lease the activate may have taken, and what came of it. */
    public LeaseHandBack leaseHandBack() {
        return leaseHandBack;
    }

    public String runId() {
        return runId;
    }
}
