package spice.authority.app;

import io.quarkus.runtime.annotations.QuarkusMain;
import spice.authority.app.cli.Main;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.serve.ServeCommand;

/**
 * Entry point of the Quarkus runner jar. Runs before Quarkus boots: every command except
 * {@code serve} runs on plain picocli and exits without booting Quarkus (so it never opens a
 * listener); {@code serve} prepares the authority and the endpoint, then boots Quarkus.
 */
@QuarkusMain
public final class QuarkusEntry {
    private QuarkusEntry() {}

    public static void main(String... args) {
        // Quarkus logs through JBoss LogManager; set it before anything (the platform selection
        // log line of 'serve') touches java.util.logging. This configures the JVM's logging only;
        // no state reaches the container through system properties (serve: runtime/ServeProducers).
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        ServeCommand fast = ServeCommand.fastArgs(args);
        if (fast != null) {
            int code;
            try {
                code = fast.serve(new java.io.PrintWriter(System.err, true));
            } catch (java.io.IOException e) {
                System.err.println("spice-authority: refused to start: " + e.getMessage());
                code = ExitCodes.REFUSED;
            }
            if (code != ExitCodes.SERVED) {
                System.exit(code);
            }
            return;
        }
        Main.runAndExit(true, args);
    }
}
