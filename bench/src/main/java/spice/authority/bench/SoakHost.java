package spice.authority.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineException;
import spice.authority.host.engine.Run;
import spice.authority.host.engine.StaticToolPlan;
import spice.authority.host.store.HostStore;
import spice.authority.host.store.RecoveryDecision;
import spice.authority.host.store.StoreException;

/**
 * One host process of {@link HostStoreSoak}: opens the store, calls {@code recover()} (one JSON
 * line per decision), says READY, then drives the scripted agent (four turns, a mutating ledger
 * tool that fsyncs one line per call) through starts, turns, suspends, local resumes and
 * completions at random until it is killed. With {@code --finish} it only completes what it
 * recovered and exits 0.
 *
 * <pre>SoakHost --socket S --store F --ledger L --prefix P --seed N [--finish]</pre>
 */
public final class SoakHost {
    private SoakHost() {
    }

    public static void main(String[] args) throws Exception {
        String socket = null, store = null, ledger = null, prefix = null;
        long seed = 1;
        boolean finish = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--socket" -> socket = args[++i];
                case "--store" -> store = args[++i];
                case "--ledger" -> ledger = args[++i];
                case "--prefix" -> prefix = args[++i];
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--finish" -> finish = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        spice.authority.host.demo.DemoHost.exitWhenInputCloses();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Random random = new Random(seed);
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(Path.of(socket))).build();
        HostStore s;
        try {
            s = HostStore.open(Path.of(store));
        } catch (StoreException e) {
            out.println("{\"event\":\"unreadable\",\"detail\":\"" + e.getMessage().replace("\"", "'") + "\"}");
            System.exit(4);
            return;
        }
        try (HostStore hs = s;
             Engine engine = Engine.builder(ScriptedAgent.model(), StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                             List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(Path.of(ledger), null))))
                     .identity(ScriptedAgent.IDENTITY).recorder(hs).open(client)) {
            List<Run> live = new ArrayList<>();
            for (RecoveryDecision d : hs.recover(engine)) {
                out.println("{\"event\":\"decision\",\"run_id\":\"" + d.runId() + "\",\"outcome\":\""
                        + d.outcome().name().toLowerCase(java.util.Locale.ROOT) + "\",\"reason\":\"" + d.reason().code() + "\"}");
                if (d.run() != null) {
                    live.add(d.run());
                }
            }
            out.println("{\"event\":\"ready\"}");
            if (finish) {
                for (Run r : live) {
                    while (r.completedTurns() < r.definition().maxTurns()) {
                        r.runTurn();
                    }
                    r.complete();
                    out.println("{\"event\":\"completed\",\"run_id\":\"" + r.runId() + "\"}");
                }
                return;
            }
            long n = 0;
            String me = prefix + "-" + ProcessHandle.current().pid();
            while (true) {
                if (live.size() < 3) {
                    live.add(engine.start(me + "-" + (++n), ScriptedAgent.DEFINITION, "soak"));
                }
                Run r = live.get(random.nextInt(live.size()));
                step(r, random, live, out);
            }
        }
    }

    private static void step(Run r, Random random, List<Run> live, PrintStream out) throws EngineException {
        switch (r.phase()) {
            case RUNNING -> {
                if (r.completedTurns() >= r.definition().maxTurns()) {
                    r.complete();
                    live.remove(r);
                    out.println("{\"event\":\"completed\",\"run_id\":\"" + r.runId() + "\"}");
                } else if (r.completedTurns() >= 1 && random.nextInt(3) == 0) {
                    r.suspend();
                } else {
                    r.runTurn();
                }
            }
            case SUSPENDED -> {
                if (random.nextBoolean()) {
                    r.resumeLocal();
                } else {
                    live.remove(r); // left suspended: a later process recovers it
                }
            }
            default -> live.remove(r);
        }
    }
}
