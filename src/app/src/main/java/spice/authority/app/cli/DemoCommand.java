package spice.authority.app.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.demo.Demo;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.snapshot.SnapshotFormat;

@Command(name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Run an agent in two host processes: kill one, resume its run in the other.",
            "A scripted agent (deterministic model, two local tools, no network) runs on the",
            "reference host engine in real host processes against a helper.",
            "",
            "Scenario 'suspended' (the default): host A runs turns 1-2, suspends at the turn",
            "boundary, stores the signed envelope and is killed with SIGKILL; host B, a new",
            "process, imports it, resumes at last_sequence+1 (no second RunStarted), runs",
            "turns 3-4 and completes the run.",
            "",
            "Scenario 'in-flight': host A is killed while a mutating tool call is in flight;",
            "B's import is refused, the tool is not run again, and the operator abandons the",
            "run.",
            "",
            "Scenario 'restart': host A records three runs in a durable host store (one",
            "suspended, one suspended waiting for an approval, one inside a mutating tool",
            "call) and is killed with SIGKILL; host B gets only the store's path, calls",
            "recover(), resumes both suspended runs exactly once and completes them, and",
            "reports the cut-off run with its call and the abandon command. No envelope is",
            "handed over. DemoResult adds resumed, completed, reported and effects_twice.",
            "",
            "With --format v1alpha3 the hosts' engines write and import spice-agent's",
            "current snapshot format (with a workspace fingerprint) instead of v1alpha2; the",
            "helper must sign v1alpha3 payloads.",
            "",
            "With no --socket it starts its own helper on a new temporary directory and",
            "removes the helper, the hosts and the directory at the end."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  every check of the scenario held (the last line is DemoResult with ok true)",
            "  1  a check failed or something could not be started (DemoResult says what)",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority demo",
            "  spice-authority demo --scenario in-flight --json",
            "  spice-authority demo --scenario restart --keep ./restart-demo",
            "  spice-authority demo --format v1alpha3"
        })
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--scenario", paramLabel = "NAME", defaultValue = "suspended",
            description = "suspended (default), in-flight or restart.")
    String scenario;

    @Option(names = "--keep", paramLabel = "DIR",
            description = "restart only: leave the scenario's host store and ledger in DIR (new or empty; made 0700) for 'spice-authority host-store inspect'.")
    Path keep;

    @Option(names = "--format", paramLabel = "VERSION", defaultValue = "v1alpha2",
            description = "The snapshot format of the hosts' engines: v1alpha2 (default, what RFC 0007 as implemented "
                    + "specifies) or v1alpha3 (what a current spice-agent writes).")
    String format;

    @Option(names = "--json", description = "Print JSON lines (proc, pid, event, …) instead of the timeline.")
    boolean json;

    @Option(names = "--socket", paramLabel = "PATH",
            description = "Use the helper already listening on this Unix socket instead of starting one; its runs stay in its directory as tombstones.")
    Path socket;

    @Override
    public Integer call() {
        Demo.Scenario s;
        SnapshotFormat f;
        try {
            s = Demo.Scenario.of(scenario);
            f = ScriptedAgent.format(format);
        } catch (IllegalArgumentException e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("spice-authority demo: " + e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        }
        if (keep != null && s != Demo.Scenario.RESTART) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("spice-authority demo: --keep applies to --scenario restart only");
            err.flush();
            return ExitCodes.USAGE;
        }
        boolean ok = new Demo(s, socket, keep, f, json, spec.commandLine().getOut()).run();
        return ok ? ExitCodes.OK : ExitCodes.REFUSED;
    }
}
