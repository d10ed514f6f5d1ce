package spice.authority.app.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "host-store",
        mixinStandardHelpOptions = true,
        description = {
            "Look into a host application's durable run store.",
            "A host that records its runs in a store (spice.authority.host.store) can be",
            "restarted with nothing but the store's file: HostStore.recover() resumes its",
            "suspended runs exactly once and reports the runs a crash cut off."
        },
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExamples:%n",
        footer = {
            "  spice-authority host-store inspect ~/.local/state/spice-authority/hosts/a.db",
            "  spice-authority host-store inspect ./restart-demo/host-store/host.db --json"
        },
        subcommands = {HostStoreInspectCommand.class})
public final class HostStoreCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Cli.subcommandRequired(spec);
    }
}
