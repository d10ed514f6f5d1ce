package spice.authority.app.command;

/**
 * The exit codes of every command (ARCHITECTURE.md "CLI"), whichever package holds the command:
 * {@code cli}, {@code serve} or {@code install}.
 */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** Something was refused; one line says what and why. */
    public static final int REFUSED = 1;
    /** Usage error. */
    public static final int USAGE = 2;
    /** Not an exit code: {@code serve} handed control to Quarkus, which decides the exit code. */
    public static final int SERVED = Integer.MIN_VALUE;

    private ExitCodes() {}
}
