package spice.authority.app.install;

import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "uninstall",
        mixinStandardHelpOptions = true,
        description = {
            "Stop and unregister the helper, then remove what 'install --user' wrote.",
            "Removes exactly the files listed in its manifest, and the directories it",
            "created when they are empty. Never removes the authority directory or anything",
            "else. A listed file changed since install, a manifest naming a place install",
            "does not write, and a helper still running after it was stopped are refused."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  uninstalled (or nothing to uninstall)",
            "  1  refused: one line says what and why; nothing was removed",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority uninstall --user --dry-run",
            "  spice-authority uninstall --user"
        })
public final class UninstallCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--user", description = "Uninstall the current user's install (the only kind).")
    boolean user;

    @Option(names = "--dry-run", description = "Print every file it would remove and every command it would run; change nothing.")
    boolean dryRun;

    private final Environment environment;

    public UninstallCommand() {
        this(null);
    }

    /** A given environment (tests); null: the current process's. */
    public UninstallCommand(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() throws IOException {
        return Installer.runCommand("uninstall", user, environment, spec.commandLine().getOut(), spec.commandLine().getErr(),
                installer -> installer.uninstall(dryRun));
    }
}
