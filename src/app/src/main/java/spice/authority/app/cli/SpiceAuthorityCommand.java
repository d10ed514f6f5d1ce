package spice.authority.app.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "spice-authority",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = {
            "The per-user run authority for AI-agent hosts (RFC 0007).",
            "It speaks spice-agent's snapshot formats v1alpha2 and v1alpha3, each in its own",
            "(nothing converts between them). 'serve' runs the helper's",
            "local HTTP API; the other commands work offline or talk to it."
        },
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  ok",
            "  1  refused: one line per item says what and why",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority serve",
            "  spice-authority authority init",
            "  spice-authority snapshot validate payload.json",
            "  spice-authority snapshot inspect envelope.pb"
        },
        subcommands = {spice.authority.app.serve.ServeCommand.class, StatusCommand.class, AuthorityCommand.class, RunsCommand.class, SnapshotCommand.class, DemoCommand.class, HostStoreCommand.class,
                spice.authority.app.install.InstallCommand.class, spice.authority.app.install.UninstallCommand.class})
public final class SpiceAuthorityCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Cli.subcommandRequired(spec);
    }
}
