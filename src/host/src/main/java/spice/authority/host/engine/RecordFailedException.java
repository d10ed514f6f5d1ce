package spice.authority.host.engine;

/**
 * The run's store could not record what the run did: the run was stopped before anything else of
 * it executed, and its lease handed back so that the run can be ended at the helper
 * ({@code spice-authority runs abandon RUN}) or, once the store works again, recovered from what
 * it did record.
 */
public final class RecordFailedException extends EngineException {
    private static final long serialVersionUID = 1L;

    RecordFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
