package spice.authority.app.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.serve.ServeCommand;

/** Builds the command line with the exit-code and error-reporting conventions of the CLI. */
public final class Cli {
    private Cli() {}

    /** The command line of the plain JVM entry point, where {@code serve} refuses to start. */
    public static CommandLine commandLine() {
        return commandLine(false);
    }

    /**
     * The command line.
     *
     * @param quarkusRunner started by the Quarkus runner jar, which alone can boot the HTTP
     *     service: {@code serve} runs only then
     */
    public static CommandLine commandLine(boolean quarkusRunner) {
        CommandLine.IFactory defaults = CommandLine.defaultFactory();
        CommandLine.IFactory factory = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> type) throws Exception {
                return type == ServeCommand.class ? type.cast(new ServeCommand(quarkusRunner)) : defaults.create(type);
            }
        };
        return configure(new CommandLine(SpiceAuthorityCommand.class, factory));
    }

    /**
     * A command that only groups others, run without one: a usage error (exit 2), the reason and
     * the group's usage on standard error.
     */
    static int subcommandRequired(CommandLine.Model.CommandSpec spec) {
        CommandLine c = spec.commandLine();
        PrintWriter err = c.getErr();
        err.println("spice-authority: '" + spec.qualifiedName() + "' needs a command: "
                + String.join(", ", c.getSubcommands().keySet()));
        c.usage(err);
        return ExitCodes.USAGE;
    }

    public static CommandLine configure(CommandLine cl) {
        cl.setExitCodeExceptionMapper(t -> ExitCodes.REFUSED);
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            PrintWriter err = c.getErr();
            err.println("spice-authority: " + ex.getMessage());
            err.println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for usage.");
            return ExitCodes.USAGE;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            // Unexpected failure: one line, no stack trace, no secrets (messages of our types are
            // content-free by design).
            c.getErr().println("spice-authority: internal error: " + ex.getClass().getSimpleName()
                    + (ex.getMessage() == null ? "" : ": " + ex.getMessage()));
            return ExitCodes.REFUSED;
        });
        return cl;
    }
}
