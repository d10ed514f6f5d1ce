package spice.authority.host.store.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.demo.JsonLine;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineException;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.Run;
import spice.authority.host.engine.StaticToolPlan;
import spice.authority.host.engine.Tool;
import spice.authority.host.store.HostStore;
import spice.authority.host.store.RecoveryDecision;
import spice.authority.host.store.StoreException;
import spice.authority.snapshot.SnapshotFormat;

/**
 * One host process of {@code spice-authority demo --scenario restart}: the scripted agent on the
 * reference engine with a durable host store, printing one JSON line per event.
 *
 * <pre>
 * RestartHost --socket PATH --proc A|B --role first|recover --store FILE --ledger FILE --run-prefix P
 *             [--format v1alpha2|v1alpha3]
 * </pre>
 * The engine writes and imports the snapshot format given (default v1alpha2; v1alpha3 with the
 * demo's workspace fingerprint); one store holds runs of either.
 * <ul>
 *   <li>{@code first} (host A): run P-1 suspends after turn 1; run P-2 suspends after turn 2,
 *       waiting for an approval; run P-3 suspends, resumes here and is left inside its mutating
 *       call of turn 2, which never returns: the demo kills the process there. No envelope leaves
 *       the process: the store keeps them.
 *   <li>{@code recover} (host B): opens the store (its path is all it has), calls
 *       {@link HostStore#recover}, prints a RecoveryDecision line per run, then completes every
 *       resumed run (P-2's approval granted first); exit 0.
 * </ul>
 * The host also exits when its standard input closes (the demo is gone), even while a call blocks.
 */
public final class RestartHost {
    private final String proc;
    private final long pid = ProcessHandle.current().pid();
    private final PrintStream out;

    private RestartHost(String proc, PrintStream out) {
        this.proc = proc;
        this.out = out;
    }

    public static void main(String[] args) {
        String socket = null, proc = null, role = null, store = null, ledger = null, prefix = null;
        String format = "v1alpha2";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--socket" -> socket = args[i + 1];
                case "--proc" -> proc = args[i + 1];
                case "--role" -> role = args[i + 1];
                case "--store" -> store = args[i + 1];
                case "--ledger" -> ledger = args[i + 1];
                case "--run-prefix" -> prefix = args[i + 1];
                case "--format" -> format = args[i + 1];
                default -> usage("unknown option " + args[i]);
            }
        }
        if (socket == null || proc == null || role == null || store == null || ledger == null || prefix == null
                || args.length % 2 != 0) {
            usage("every option is required");
        }
        SnapshotFormat snapshotFormat = null;
        try {
            snapshotFormat = ScriptedAgent.format(format);
        } catch (IllegalArgumentException e) {
            usage(e.getMessage());
        }
        spice.authority.host.demo.DemoHost.exitWhenInputCloses();
        RestartHost host = new RestartHost(proc, new PrintStream(System.out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = host.run(Path.of(socket), role, Path.of(store), Path.of(ledger), prefix, snapshotFormat);
        } catch (InterruptedException e) {
            code = 1;
        } catch (EngineException | IOException | StoreException | RuntimeException e) {
            host.emit(JsonLine.of(proc, host.pid, "HostFailed").put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
            code = 1;
        }
        System.exit(code);
    }

    private static void usage(String why) {
        System.err.println("RestartHost: " + why);
        System.err.println("usage: RestartHost --socket PATH --proc A|B --role first|recover --store FILE --ledger FILE "
                + "--run-prefix P [--format v1alpha2|v1alpha3]");
        System.exit(2);
    }

    private synchronized void emit(JsonLine line) {
        out.println(line);
    }

    private void onEvent(Event e) {
        if (e.type() == Event.Type.MESSAGE_APPENDED) {
            return;
        }
        JsonLine l = JsonLine.of(proc, pid, e.type().display()).put("run_id", e.runId()).put("seq", e.sequence());
        if (e.turn() > 0) {
            l.put("turn", e.turn());
        }
        l.put("call_id", e.callId()).put("tool", e.toolName());
        emit(l);
    }

    /** The demo's plan: the scripted tools, whose ledger call t2-write never returns in run {@code hangRun}. */
    static StaticToolPlan plan(Path ledger, String hangRun) {
        Tool ledgerTool = ScriptedAgent.appendLedger(ledger, null);
        Tool maybeHanging = Tool.of(ledgerTool.definition(), (runId, callId, arguments) -> {
            var result = ledgerTool.call(runId, callId, arguments);
            if (runId.equals(hangRun) && callId.equals("t2-write")) {
                new CountDownLatch(1).await(); // the side effect is done; its answer never comes
            }
            return result;
        });
        return StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(), maybeHanging));
    }

    private int run(Path socket, String role, Path storeFile, Path ledger, String prefix, SnapshotFormat format)
            throws EngineException, IOException, StoreException, InterruptedException {
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(socket)).build();
        String hangRun = prefix + "-3";
        try (HostStore store = HostStore.open(storeFile);
             Engine engine = Engine.builder(ScriptedAgent.model(), plan(ledger, hangRun)).format(format)
                     .identity(ScriptedAgent.identity(format))
                     .recorder(store).listener(this::onEvent).open(client)) {
            switch (role) {
                case "first" -> {
                    Run one = engine.start(prefix + "-1", ScriptedAgent.DEFINITION, "Keep a ledger of four turns.");
                    one.runTurn();
                    one.suspend();
                    emit(JsonLine.of(proc, pid, "RunSuspended").put("run_id", one.runId()).put("seq", one.events().head()));
                    Run two = engine.start(prefix + "-2", ScriptedAgent.DEFINITION, "Keep a ledger; ask before turn 3.");
                    two.runTurn();
                    two.runTurn();
                    two.suspend();
                    emit(JsonLine.of(proc, pid, "RunSuspended").put("run_id", two.runId()).put("seq", two.events().head()));
                    emit(JsonLine.of(proc, pid, "ApprovalRequested").put("run_id", two.runId()));
                    Run three = engine.start(hangRun, ScriptedAgent.DEFINITION, "Keep a ledger of four turns.");
                    three.runTurn();
                    three.suspend();
                    three.resumeLocal();
                    three.runTurn(); // its mutating call of turn 2 never returns: the demo kills this process
                    return 1;
                }
                case "recover" -> {
                    emit(JsonLine.of(proc, pid, "StoreOpened").put("crash_epochs", store.crashes().size()));
                    List<RecoveryDecision> decisions = store.recover(engine);
                    for (RecoveryDecision d : decisions) {
                        JsonLine l = JsonLine.of(proc, pid, "RecoveryDecision").put("run_id", d.runId())
                                .put("outcome", d.outcome().name().toLowerCase(java.util.Locale.ROOT))
                                .put("reason", d.reason().code());
                        if (d.cutOff() != null) {
                            l.put("call_id", d.cutOff().callId()).put("tool", d.cutOff().tool())
                                    .put("mutating", d.cutOff().mutating()).put("started_seq", d.cutOff().startedSequence());
                        }
                        if (d.operatorCommand() != null) {
                            l.put("command", d.operatorCommand());
                        }
                        emit(l);
                    }
                    for (RecoveryDecision d : decisions) {
                        if (d.run() == null) {
                            continue;
                        }
                        Run run = d.run();
                        if (run.runId().equals(prefix + "-2")) {
                            emit(JsonLine.of(proc, pid, "ApprovalGranted").put("run_id", run.runId()));
                        }
                        while (run.completedTurns() < run.definition().maxTurns()) {
                            run.runTurn();
                        }
                        run.complete();
                    }
                    return 0;
                }
                default -> throw new IllegalArgumentException("unknown role " + role);
            }
        }
    }
}
