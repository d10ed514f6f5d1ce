package spice.authority.host.engine;

/** The run failed (model or tool failure, turn limit, identity collision) and is FAILED now. */
public final class RunFailedException extends EngineException {
    private static final long serialVersionUID = 1L;

    RunFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
