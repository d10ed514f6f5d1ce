package spice.authority.host.engine;

/**
 * A refusal or failure of the reference engine. The subtypes say what a host may do next.
 *
 * <p>Guarantees: messages name the run and what was refused, never message text, tool data, a
 * session id or a token.
 */
public abstract sealed class EngineException extends Exception
        permits ExportRefusedException, ImportRefusedException, ImportUncertainException,
        RunStateException, RunFailedException, AuthorityFailedException, RecordFailedException {
    private static final long serialVersionUID = 1L;

    EngineException(String message, Throwable cause) {
        super(message, cause);
    }
}
