package spice.authority.host.engine;

/** Export refused: runs export only suspended at a completed turn boundary, or after a terminal. */
public final class ExportRefusedException extends EngineException {
    private static final long serialVersionUID = 1L;

    ExportRefusedException(String message) {
        super(message, null);
    }
}
