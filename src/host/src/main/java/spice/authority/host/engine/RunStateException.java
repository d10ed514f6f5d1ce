package spice.authority.host.engine;

/**
 * The run is not in a state for this call: e.g. a turn without an active authority lease, a
 * resume of a run that is not suspended, or a run that was stopped.
 */
public final class RunStateException extends EngineException {
    private static final long serialVersionUID = 1L;

    RunStateException(String message) {
        super(message, null);
    }
}
