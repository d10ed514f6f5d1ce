package spice.authority.app.cli;

import io.quarkus.picocli.runtime.annotations.TopCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@TopCommand
@Command(name = "spice-authority",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = {
            "The per-user run authority for AI-agent hosts (RFC 0007, spice-agent snapshot format v1alpha2).",
            "This release creates and checks the authority directory, validates snapshot payloads",
            "and inspects signed envelopes."
        },
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  ok",
            "  1  refused: one line per item says what and why",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority authority init",
            "  spice-authority snapshot validate payload.json",
            "  spice-authority snapshot inspect envelope.pb"
        },
        subcommands = {AuthorityCommand.class, SnapshotCommand.class})
public final class SpiceAuthorityCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
