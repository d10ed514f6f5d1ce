package spice.authority.host.engine;

import java.io.IOException;

/**
 * The helper refused or failed a call the engine made. {@link #uncertain()} says whether the call
 * may have taken effect: then nothing may be retried automatically.
 */
public final class AuthorityFailedException extends EngineException {
    private static final long serialVersionUID = 1L;
    private final boolean uncertain;
    private final LeaseHandBack leaseHandBack;

    AuthorityFailedException(String message, IOException cause) {
        this(message, cause, Authorities.outcomeUnknown(cause));
    }

    /** {@code uncertain}: known from more than this call's failure (an earlier attempt's outcome). */
    AuthorityFailedException(String message, IOException cause, boolean uncertain) {
        this(message, cause, uncertain, LeaseHandBack.NONE);
    }

    AuthorityFailedException(String message, IOException cause, boolean uncertain, LeaseHandBack leaseHandBack) {
        super(message + ": " + cause.getMessage(), cause);
        this.uncertain = uncertain;
        this.leaseHandBack = leaseHandBack;
    }

    /** Whether the engine handed the run's lease back after this failure, and what came of it. */
    public LeaseHandBack leaseHandBack() {
        return leaseHandBack;
    }

    /** True when the failed call may have taken effect. */
    public boolean uncertain() {
        return uncertain;
    }

    /** The helper's refusal or the transport failure. */
    public IOException failure() {
        return (IOException) getCause();
    }
}
