package spice.authority.app.cli;

import picocli.CommandLine;

/**
 * Plain entry point for every command except {@code serve}: runs picocli directly, without
 * booting Quarkus, so it starts fast and can never open a listener. The root launcher
 * ({@code ./spice-authority}) uses it; {@code serve} goes through the Quarkus runner instead.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI and returns its exit code (0 ok, 1 refused, 2 usage). */
    public static int run(String... args) {
        return Cli.commandLine().execute(args);
    }
}
