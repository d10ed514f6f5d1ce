package spice.authority.app.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RunView;
import spice.authority.host.Session;
import spice.authority.host.demo.JsonLine;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.SnapshotFormat;

/**
 * {@code demo --scenario restart}: host A runs three runs with a durable host store (one suspended,
 * one suspended waiting for an approval, one left inside a mutating tool call) and is killed with
 * SIGKILL; host B gets only the store's path, resumes every suspended run exactly once, completes
 * them, and reports the cut-off run with its call and the operator's command. No envelope is
 * handed over. The demo then ends the cut-off run as the operator would.
 */
final class RestartScenario {
    private static final String HOST = "spice.authority.host.store.demo.RestartHost";

    private final Output out;
    private final List<String> failures;
    private final List<Process> processes;
    private final SnapshotFormat format;

    RestartScenario(Output out, List<String> failures, List<Process> processes, SnapshotFormat format) {
        this.out = out;
        this.failures = failures;
        this.processes = processes;
        this.format = format;
    }

    /** Runs it in {@code work} (store and ledger); returns the DemoResult's counts. */
    Map<String, Object> run(long demoPid, String prefix, Path sock, Path work) throws IOException, InterruptedException {
        Map<String, Object> counts = new LinkedHashMap<>();
        Path store = work.resolve("host-store").resolve("host.db");
        Path ledger = work.resolve("ledger.txt");
        String cutRun = prefix + "-3";
        out.note("demo", demoPid, "host A runs " + prefix + "-1, -2 and -3 with its store " + store);
        HostProcess a = HostProcess.start("A", HOST, args(sock, "A", "first", store, ledger, prefix), processes);
        Map<String, Object> at = a.relayUntil(out, l -> "ToolCallStarted".equals(l.get("event"))
                && cutRun.equals(l.get("run_id")) && "append_ledger".equals(l.get("tool")) && Long.valueOf(2).equals(l.get("turn")));
        if (at == null) {
            failures.add("host A ended before its in-flight call: " + a.stderrTail());
            return counts;
        }
        Demo.awaitLedgerLine(ledger, cutRun + " t2-write");
        a.process.destroyForcibly(); // SIGKILL
        boolean ended = a.process.waitFor(Demo.STEP_TIMEOUT_S, TimeUnit.SECONDS);
        Integer exit = ended ? a.process.exitValue() : null;
        out.line(JsonLine.of("A", a.process.pid(), "Killed").put("signal", "SIGKILL").put("exit_code", exit));
        if (exit == null || exit != 128 + 9) {
            failures.add("host A did not die of SIGKILL (exit " + exit + ")");
            return counts;
        }

        out.note("demo", demoPid, "host B, a new process, gets only the store's path and calls recover()");
        HostProcess b = HostProcess.start("B", HOST, args(sock, "B", "recover", store, ledger, prefix), processes);
        int resumed = 0;
        int reported = 0;
        int completed = 0;
        Long crashEpochs = null;
        Map<String, Object> cut = null;
        Map<String, Object> l;
        while ((l = b.next()) != null) {
            out.relay(l);
            switch ((String) l.get("event")) {
                case "StoreOpened" -> crashEpochs = (Long) l.get("crash_epochs");
                case "RecoveryDecision" -> {
                    if ("resumed".equals(l.get("outcome"))) {
                        resumed++;
                    } else if ("reported".equals(l.get("outcome"))) {
                        reported++;
                        if (cutRun.equals(l.get("run_id"))) {
                            cut = l;
                        }
                    } else {
                        failures.add("run " + l.get("run_id") + " was " + l.get("outcome") + ": " + l.get("reason"));
                    }
                }
                case "RunCompleted" -> completed++;
                case "RunStarted" -> failures.add("host B emitted a RunStarted");
                case "HostFailed" -> failures.add("host B failed: " + l.get("error"));
                default -> { }
            }
        }
        int bExit = b.waitExit();
        expect(bExit == 0, "host B exited " + bExit + ": " + b.stderrTail());
        expect(Long.valueOf(1).equals(crashEpochs), "host B found " + crashEpochs + " crash epochs, expected 1 (host A's)");
        expect(resumed == 2, "host B resumed " + resumed + " runs, expected 2");
        expect(completed == 2, "host B completed " + completed + " runs, expected 2");
        expect(reported == 1, "host B reported " + reported + " runs, expected 1");
        expect(cut != null && "cut_off_tool_call".equals(cut.get("reason")) && "t2-write".equals(cut.get("call_id"))
                        && Boolean.TRUE.equals(cut.get("mutating"))
                        && ("spice-authority runs abandon " + cutRun).equals(cut.get("command")),
                "the cut-off run was not reported with its call t2-write and the abandon command: " + cut);

        List<String> lines = Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
        Set<String> seen = new HashSet<>();
        int twice = 0;
        for (String s : lines) {
            if (!seen.add(s)) {
                twice++;
                failures.add("a tool call ran twice: " + s);
            }
        }
        // Runs 1 and 2: four ledger calls each; run 3: turn 1's and its cut-off call of turn 2, once.
        expect(lines.size() == 10, "the ledger has " + lines.size() + " entries, expected 10");

        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).build();
        Session session = client.openSession();
        try {
            for (String id : List.of(prefix + "-1", prefix + "-2")) {
                RunView v = client.run(id);
                expect(v.phase() == RunPhase.COMPLETED, "the helper shows run " + id + " " + v.phase() + ", expected COMPLETED");
            }
            RunView v = client.run(cutRun);
            expect(v.phase() == RunPhase.ACTIVE && !v.owned(), "the helper shows run " + cutRun + " " + v.phase()
                    + (v.owned() ? " (owned)" : "") + ", expected ACTIVE and not owned");
            out.note("demo", demoPid, "the operator ends the cut-off run: spice-authority runs abandon " + cutRun + " --yes");
            RunView gone = client.abandon(session, cutRun);
            out.line(JsonLine.of("demo", demoPid, "RunAbandoned").put("run_id", cutRun).put("phase", gone.phase().name()));
            expect(gone.phase() == RunPhase.CANCELLED, "abandon left run " + cutRun + " " + gone.phase());
        } finally {
            client.closeSession(session);
        }
        counts.put("resumed", resumed);
        counts.put("completed", completed);
        counts.put("reported", reported);
        counts.put("effects_twice", twice);
        return counts;
    }

    private List<String> args(Path sock, String proc, String role, Path store, Path ledger, String prefix) {
        return List.of("--socket", sock.toString(), "--proc", proc, "--role", role, "--store", store.toString(),
                "--ledger", ledger.toString(), "--run-prefix", prefix, "--format", format.version());
    }

    private void expect(boolean holds, String failure) {
        if (!holds) {
            failures.add(failure);
        }
    }
}
