package spice.authority.app.install;

/** An install or uninstall refused with a one-line reason; nothing was changed on disk. */
public final class InstallRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    public InstallRefusedException(String message) {
        super(message, null, false, false);
    }
}
