package spice.authority.app.cli;

import java.io.PrintWriter;
import picocli.CommandLine;

/** Builds the command line with the exit-code and error-reporting conventions of the CLI. */
public final class Cli {
    /** Success. */
    public static final int OK = 0;
    /** Something was refused; one line says what and why. */
    public static final int REFUSED = 1;
    /** Usage error. */
    public static final int USAGE = 2;

    private Cli() {}

    public static CommandLine commandLine() {
        return configure(new CommandLine(new SpiceAuthorityCommand()));
    }

    public static CommandLine configure(CommandLine cl) {
        cl.setExitCodeExceptionMapper(t -> REFUSED);
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            PrintWriter err = c.getErr();
            err.println("spice-authority: " + ex.getMessage());
            err.println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for usage.");
            return USAGE;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            // Unexpected failure: one line, no stack trace, no secrets (messages of our types are
            // content-free by design).
            c.getErr().println("spice-authority: internal error: " + ex.getClass().getSimpleName()
                    + (ex.getMessage() == null ? "" : ": " + ex.getMessage()));
            return REFUSED;
        });
        return cl;
    }
}
