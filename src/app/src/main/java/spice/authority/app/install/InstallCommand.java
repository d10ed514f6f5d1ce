package spice.authority.app.install;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "install",
        mixinStandardHelpOptions = true,
        description = {
            "Install the app-image for this user and start the helper at every login.",
            "Where: Linux: $XDG_DATA_HOME/spice-authority/VERSION (default ~/.local/share),",
            "a link ~/.local/bin/spice-authority, and the systemd user unit",
            "spice-authority.service; macOS: ~/Library/Application Support/spice-authority",
            "and a launchd agent; Windows: %%LOCALAPPDATA%%\\Programs\\spice-authority and a",
            "scheduled task at logon. Re-installing the same version changes no file, and",
            "starts the helper only when the service manager says it is not running. Files",
            "that install did not write are never overwritten: install refuses instead (the",
            "manifest in the install directory lists every file it wrote with its SHA-256).",
            "systemctl, launchctl and schtasks are run from the system's directories, never",
            "from PATH."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  installed (or already installed)",
            "  1  refused: one line says which path and why; nothing was changed",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority install --user --dry-run",
            "  spice-authority install --user",
            "  spice-authority install --user --from src/app/target/app-image/spice-authority"
        })
public final class InstallCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--user", description = "Install for the current user (the only kind of install).")
    boolean user;

    @Option(names = "--dry-run", description = "Print every file it would write and every command it would run; change nothing.")
    boolean dryRun;

    @Option(names = "--from", paramLabel = "DIR", description = "The app-image to install. Default: the one this launcher belongs to.")
    Path from;

    private final Environment environment;

    /** The real environment. */
    public InstallCommand() {
        this(null);
    }

    /** A given environment (tests); null: the current process's. */
    public InstallCommand(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() throws IOException {
        return Installer.runCommand("install", user, environment, spec.commandLine().getOut(), spec.commandLine().getErr(),
                installer -> installer.install(Optional.ofNullable(from), dryRun));
    }
}
