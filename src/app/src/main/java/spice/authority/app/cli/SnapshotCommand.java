package spice.authority.app.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "snapshot",
        mixinStandardHelpOptions = true,
        description = {
            "Validate v1alpha2 and v1alpha3 payloads and inspect signed envelopes.",
            "Works offline; no key is needed."
        },
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExamples:%n",
        footer = {
            "  spice-authority snapshot validate payload.json other.json",
            "  spice-authority snapshot inspect envelope.pb"
        },
        subcommands = {SnapshotValidateCommand.class, SnapshotInspectCommand.class})
public final class SnapshotCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Cli.subcommandRequired(spec);
    }
}
