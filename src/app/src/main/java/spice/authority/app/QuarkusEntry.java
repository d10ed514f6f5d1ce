package spice.authority.app;

import io.quarkus.runtime.annotations.QuarkusMain;
import spice.authority.app.cli.Main;

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
        // log line of 'serve') touches java.util.logging.
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        Main.QUARKUS_RUNNER.set(true);
        Main.main(args);
    }
}
