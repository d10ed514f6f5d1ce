package spice.authority.app.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.text.LogText;
import spice.authority.app.view.JsonTree;
import spice.authority.host.store.HostStore;
import spice.authority.host.store.Inspection;
import spice.authority.host.store.StoreException;

@Command(name = "inspect",
        mixinStandardHelpOptions = true,
        description = {
            "Show what a host store holds, without writing to it.",
            "Its runs, checkpoints, open tool calls, crash epochs and recovery decisions.",
            "Read-only and safe while the host writes: it takes no lock and writes nothing.",
            "The file must meet the store's rules (your own, no access for group or",
            "others, in a 0700 directory, not a symbolic link). No payload, envelope",
            "or conversation text is shown."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  the store was read",
            "  1  refused or unreadable (the message says which rule or error)",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority host-store inspect ~/.local/state/spice-authority/hosts/a.db",
            "  spice-authority host-store inspect host.db --json"
        })
public final class HostStoreInspectCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The store's database file.")
    Path file;

    @Option(names = "--json", description = "Print one JSON object: runs (run_id, phase, last_sequence, checkpoints, "
            + "open_tool_calls), crash_epochs and decisions.")
    boolean json;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (System.getProperty("slf4j.provider") == null) {
            // sqlite-jdbc logs through SLF4J when it is present; this plain-JVM command has no backend
            // for it (Quarkus's needs its log manager) and nothing to log: SLF4J's own no-op provider.
            // Logging configuration of a command that starts no container; it carries no state.
            System.setProperty("slf4j.internal.verbosity", "WARN");
            System.setProperty("slf4j.provider", "org.slf4j.helpers.NOP_FallbackServiceProvider");
        }
        Inspection i;
        try {
            i = Inspection.of(file);
        } catch (StoreException e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("spice-authority host-store inspect: " + LogText.of(e.getMessage()));
            err.flush();
            return ExitCodes.REFUSED;
        }
        if (json) {
            out.println(JsonTree.pretty(tree(i)));
        } else {
            text(out, i);
        }
        out.flush();
        return ExitCodes.OK;
    }

    static Map<String, Object> tree(Inspection i) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("file", i.file().toString());
        List<Object> runs = new ArrayList<>();
        for (Inspection.RunSummary r : i.runs()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("run_id", r.runId());
            m.put("phase", r.phase());
            m.put("last_sequence", Long.toUnsignedString(r.lastSequence()));
            List<Object> cps = new ArrayList<>();
            for (Inspection.CheckpointSummary c : r.checkpoints()) {
                Map<String, Object> cm = new LinkedHashMap<>();
                cm.put("sequence", Long.toUnsignedString(c.sequence()));
                cm.put("status", c.status());
                cm.put("state", c.state());
                cm.put("payload_bytes", c.payloadBytes());
                cm.put("envelope", c.envelope());
                cps.add(cm);
            }
            m.put("checkpoints", cps);
            List<Object> open = new ArrayList<>();
            for (Inspection.OpenCall c : r.openToolCalls()) {
                Map<String, Object> om = new LinkedHashMap<>();
                om.put("call_id", c.callId());
                om.put("tool", c.tool());
                om.put("effect", c.effect());
                om.put("replay_safety", c.replaySafety());
                om.put("started_sequence", Long.toUnsignedString(c.startedSequence()));
                open.add(om);
            }
            m.put("open_tool_calls", open);
            runs.add(m);
        }
        root.put("runs", runs);
        List<Object> crashes = new ArrayList<>();
        for (HostStore.CrashEpoch c : i.crashEpochs()) {
            Map<String, Object> cm = new LinkedHashMap<>();
            cm.put("epoch", c.epoch());
            cm.put("pid", c.pid());
            cm.put("opened_at_ms", c.openedAtMillis());
            crashes.add(cm);
        }
        root.put("crash_epochs", crashes);
        List<Object> decisions = new ArrayList<>();
        for (Inspection.Decision d : i.decisions()) {
            Map<String, Object> dm = new LinkedHashMap<>();
            dm.put("run_id", d.runId());
            dm.put("decision", d.decision());
            dm.put("reason", d.reason());
            dm.put("detail", d.detail());
            dm.put("decided_at_ms", d.decidedAtMillis());
            decisions.add(dm);
        }
        root.put("decisions", decisions);
        return root;
    }

    private static void text(PrintWriter out, Inspection i) {
        out.println("store " + i.file());
        out.println("runs: " + i.runs().size());
        for (Inspection.RunSummary r : i.runs()) {
            out.println("  " + LogText.of(r.runId()) + "  " + r.phase() + "  last event " + Long.toUnsignedString(r.lastSequence()));
            for (Inspection.CheckpointSummary c : r.checkpoints()) {
                out.println("    checkpoint " + Long.toUnsignedString(c.sequence()) + "  " + c.status() + "  " + c.state()
                        + "  " + c.payloadBytes() + " payload bytes" + (c.envelope() ? ", envelope kept" : ", no envelope"));
            }
            for (Inspection.OpenCall c : r.openToolCalls()) {
                out.println("    open tool call " + LogText.of(c.callId()) + " (" + LogText.of(c.tool()) + ", " + c.effect()
                        + ", replay " + c.replaySafety() + ") started at " + Long.toUnsignedString(c.startedSequence())
                        + ": cut off if its host is gone");
            }
        }
        out.println("crash epochs (writers that never closed): " + i.crashEpochs().size());
        for (HostStore.CrashEpoch c : i.crashEpochs()) {
            out.println("  epoch " + c.epoch() + "  pid " + c.pid() + "  opened " + java.time.Instant.ofEpochMilli(c.openedAtMillis()));
        }
        out.println("recovery decisions: " + i.decisions().size());
        for (Inspection.Decision d : i.decisions()) {
            out.println("  " + java.time.Instant.ofEpochMilli(d.decidedAtMillis()) + "  " + LogText.of(d.runId()) + "  "
                    + d.decision() + "  " + d.reason());
            out.println("    " + LogText.of(d.detail()));
        }
    }
}
