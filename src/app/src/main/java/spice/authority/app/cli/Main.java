package spice.authority.app.cli;

import spice.authority.app.command.ExitCodes;

/**
 * Plain entry point for every command except {@code serve}: runs picocli directly, without
 * booting Quarkus, so it starts fast and can never open a listener. The root launcher
 * ({@code ./spice-authority}) uses it; {@code serve} goes through the Quarkus runner instead.
 */
public final class Main {
    private Main() {}

    // Held strongly: JUL keeps loggers weakly, and the level must survive until the command ends.
    private static java.util.logging.Logger platformLog;

    public static void main(String[] args) {
        runAndExit(false, args);
    }

    /**
     * Runs the CLI, then exits with its code, unless {@code serve} handed control to Quarkus.
     *
     * @param quarkusRunner started by the Quarkus runner jar, which alone can boot the HTTP service
     */
    public static void runAndExit(boolean quarkusRunner, String... args) {
        // The one-time "secure directory platform" INFO line is for the helper's log, not for
        // short commands whose output users read.
        boolean serving = args.length > 0 && args[0].equals("serve");
        if (!serving) {
            platformLog = java.util.logging.Logger.getLogger("spice.authority.os.SecureDirectories");
            platformLog.setLevel(java.util.logging.Level.WARNING);
        }
        int code = Cli.commandLine(quarkusRunner).execute(args);
        if (code != ExitCodes.SERVED) {
            System.exit(code);
        }
    }

    /** Runs the CLI of the plain entry point and returns its exit code (0 ok, 1 refused, 2 usage). */
    public static int run(String... args) {
        return Cli.commandLine().execute(args);
    }
}
