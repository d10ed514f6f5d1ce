package spice.authority.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import spice.authority.host.ImportView;
import spice.authority.host.RunView;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.host.engine.Authority;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.Recorder;
import spice.authority.host.engine.StaticToolPlan;
import spice.authority.host.store.HostStore;
import spice.authority.host.store.RecoveryDecision;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.payload.Role;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.plan.PlanIdentities;

/**
 * The host store's costs, in one run on one disk, as ratios to a bare SQLite commit (WAL,
 * {@code synchronous=FULL}, one auto-committed INSERT) of the same bytes:
 * <ul>
 *   <li>event commit ({@link HostStore#event}: the row, its chained digest, the run's head) against
 *       a bare commit of a row of the same size;
 *   <li>checkpoint commit ({@link HostStore#pending} then {@link HostStore#signed}: the payload
 *       durable before the sign, the envelope after; the helper's sign itself not included)
 *       against a bare commit of the payload and envelope bytes, and against LangGraph's
 *       {@code SqliteSaver.put} of the payload ({@link SqliteSaver});
 *   <li>{@code recover()} per run: a store of suspended runs (each with its events and a signed
 *       checkpoint) checked and imported through an engine whose authority answers at once, so
 *       the figure is the store's and the engine's share only.
 * </ul>
 *
 * <pre>java -cp bench/target/benchmarks.jar spice.authority.bench.HostStoreBench [--ops 400] [--runs 200] [--dir DIR]</pre>
 * DIR must be on the disk to measure (default: a new directory under {@code java.io.tmpdir}).
 */
public final class HostStoreBench {
    private HostStoreBench() {
    }

    public static void main(String[] args) throws Exception {
        int ops = 400;
        int runs = 200;
        Path base = Path.of(System.getProperty("java.io.tmpdir"));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--ops" -> ops = Integer.parseInt(args[++i]);
                case "--runs" -> runs = Integer.parseInt(args[++i]);
                case "--dir" -> base = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path dir = Files.createTempDirectory(base, "host-store-bench-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            run(dir, ops, runs);
        } finally {
            SuspendSideBySide.deleteTree(dir);
        }
    }

    private static void run(Path dir, int ops, int runs) throws Exception {
        System.out.printf("HostStoreBench: %d operations each, %d runs recovered, in %s, load %s%n", ops, runs, dir,
                SuspendSideBySide.loadAverage());
        byte[] payload = payload("bench-run", 3, 9);
        byte[] envelope = Envelopes.unsigned(Snapshot.decode(payload)).seal(new Claim(new byte[32], 1, new byte[32])).toBinary();
        int eventBytes = 140; // an event row: run ID, sequence, kind, turn, identifiers and a 32-byte digest

        List<Long> bareEvent = new ArrayList<>();
        List<Long> bareCheckpoint = new ArrayList<>();
        List<Long> saver = new ArrayList<>();
        List<Long> event = new ArrayList<>();
        List<Long> checkpoint = new ArrayList<>();
        List<Long> pendingOnly = new ArrayList<>();
        List<Long> signedOnly = new ArrayList<>();
        try (Connection bare = bare(dir.resolve("bare.db"));
             PreparedStatement one = bare.prepareStatement("INSERT INTO t (v) VALUES (?)");
             PreparedStatement two = bare.prepareStatement("INSERT INTO c (p, e) VALUES (?, ?)");
             SqliteSaver langgraph = new SqliteSaver(dir.resolve("saver.db"));
             HostStore store = HostStore.open(dir.resolve("store").resolve("host.db"))) {
            System.out.println("  bare and saver: " + langgraph.mode() + "; payload " + payload.length + " B, envelope "
                    + envelope.length + " B");
            PlanIdentity plan = Snapshot.decode(payload).planIdentity();
            store.begin(new Recorder.RunFacts("bench-run", plan, definitions(
                    List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(dir.resolve("ledger"), null))), 1, null));
            long seq = 0;
            byte[] row = new byte[eventBytes];
            // Interleaved, so that each kind sees the same disk state and load.
            for (int i = 0; i < ops + ops / 4; i++) {
                boolean warm = i >= ops / 4;
                long t = System.nanoTime();
                one.setBytes(1, row);
                one.executeUpdate();
                long t1 = System.nanoTime();
                Event e = new Event(++seq, "bench-run", seq == 1 ? Event.Type.RUN_STARTED : Event.Type.TURN_STARTED,
                        (int) Math.min(seq, 1000), null, null, null);
                store.event(e);
                long t2 = System.nanoTime();
                two.setBytes(1, payload);
                two.setBytes(2, envelope);
                two.executeUpdate();
                long t3 = System.nanoTime();
                long at = seq + 1;
                store.pending("bench-run", at, LifecycleStatus.SUSPENDED, payload);
                long t3s = System.nanoTime();
                store.signed("bench-run", at, envelope, new Event(at, "bench-run", Event.Type.RUN_SUSPENDED, 0, null, null, null));
                seq = at;
                long t4 = System.nanoTime();
                langgraph.put("bench-run", payload);
                long t5 = System.nanoTime();
                if (warm) {
                    bareEvent.add(t1 - t);
                    event.add(t2 - t1);
                    bareCheckpoint.add(t3 - t2);
                    checkpoint.add(t4 - t3);
                    pendingOnly.add(t3s - t3);
                    signedOnly.add(t4 - t3s);
                    saver.add(t5 - t4);
                }
            }
        }
        double be = median(bareEvent);
        double bc = median(bareCheckpoint);
        row("bare commit, " + eventBytes + " B row", bareEvent, be);
        row("event commit (HostStore.event)", event, be);
        row("bare commit, payload + envelope", bareCheckpoint, bc);
        row("checkpoint commit (pending + signed)", checkpoint, bc);
        row("  of which pending (payload, synced)", pendingOnly, bc);
        row("  of which signed (envelope + RunSuspended)", signedOnly, bc);
        row("SqliteSaver.put (LangGraph layout), payload", saver, bc);
        System.out.printf("  checkpoint / SqliteSaver.put: %.2fx%n", median(checkpoint) / median(saver));

        List<Long> perRun = new ArrayList<>();
        for (int rep = 0; rep < 3; rep++) {
            perRun.add(recoverPerRun(dir.resolve("recover-" + rep), runs));
        }
        Collections.sort(perRun);
        System.out.printf("  recover() per run (%d suspended runs, 3 stores): median %.3f ms (%s); %.2fx the bare "
                + "commit of its checkpoint's bytes%n", runs, perRun.get(1) / 1e6, perRun.stream()
                .map(n -> String.format("%.3f", n / 1e6)).toList(), perRun.get(1) / 1e6 / bc);
    }

    /** Nanoseconds per run of one recover() over {@code runs} suspended runs. */
    private static long recoverPerRun(Path dir, int runs) throws Exception {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path file = dir.resolve("host.db");
        StaticToolPlan tools = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(dir.resolve("ledger"), null)));
        try (HostStore s = HostStore.open(file)) {
            for (int r = 0; r < runs; r++) {
                String id = "run-" + r;
                byte[] p = payload(id, 1, 14);
                s.begin(new Recorder.RunFacts(id, Snapshot.decode(p).planIdentity(), definitions(tools.lease(
                        ScriptedAgent.PLAN_ID).tools()), 1, null));
                for (long q = 1; q <= 13; q++) {
                    s.event(new Event(q, id, q == 1 ? Event.Type.RUN_STARTED : Event.Type.TURN_STARTED, 1, null, null, null));
                }
                s.pending(id, 14, LifecycleStatus.SUSPENDED, p);
                s.signed(id, 14, Envelopes.unsigned(Snapshot.decode(p)).seal(new Claim(new byte[32], 1, new byte[32])).toBinary(),
                        new Event(14, id, Event.Type.RUN_SUSPENDED, 0, null, null, null));
            }
        }
        try (HostStore s = HostStore.open(file);
             Engine engine = Engine.builder(new Immediate(), ScriptedAgent.model(), tools).identity(ScriptedAgent.IDENTITY)
                     .recorder(s).build()) {
            long t = System.nanoTime();
            List<RecoveryDecision> ds = s.recover(engine);
            long took = System.nanoTime() - t;
            long resumed = ds.stream().filter(d -> d.outcome() == RecoveryDecision.Outcome.RESUMED).count();
            if (resumed != runs) {
                throw new IllegalStateException("resumed " + resumed + " of " + runs + ": " + ds.get(0).detail());
            }
            return took / runs;
        }
    }

    /** A ScriptedAgent payload of {@code turns} completed turns, SUSPENDED at {@code lastSequence}. */
    static byte[] payload(String runId, int turns, long lastSequence) throws Exception {
        StaticToolPlan tools = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(Path.of("/nonexistent"), null)));
        PlanIdentity plan = PlanIdentities.planIdentity(ScriptedAgent.IDENTITY.compiledIdentities(), ScriptedAgent.PLAN_ID,
                ScriptedAgent.IDENTITY.compatibilityIdentity(), definitions(tools.lease(ScriptedAgent.PLAN_ID).tools()));
        Snapshot.Builder b = Snapshot.builder().runId(runId).definition(ScriptedAgent.DEFINITION).completedTurns(turns)
                .planIdentity(plan).seenInteractionIds(List.of()).lastSequence(lastSequence).status(LifecycleStatus.SUSPENDED);
        b.addMessage(new Message(runId + "/message/user", Role.USER, List.of(new Part.Text("Keep a ledger of four turns."))));
        for (int t = 1; t <= turns; t++) {
            b.addMessage(new Message(runId + "/message/a" + t, Role.ASSISTANT,
                    List.of(new Part.Text("turn " + t + " is done: " + "the notes say nothing new. ".repeat(8)))));
        }
        return b.build().canonicalBytes();
    }

    private static List<spice.authority.snapshot.plan.ToolDefinition> definitions(List<spice.authority.host.engine.Tool> tools) {
        return tools.stream().map(spice.authority.host.engine.Tool::definition).toList();
    }

    private static Connection bare(Path file) throws Exception {
        Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("PRAGMA synchronous=FULL");
            s.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB) STRICT");
            s.execute("CREATE TABLE c (k INTEGER PRIMARY KEY, p BLOB, e BLOB) STRICT");
        }
        return c;
    }

    /** Milliseconds. */
    private static double median(List<Long> n) {
        return SuspendSideBySide.median(n);
    }

    private static void row(String what, List<Long> nanos, double baseline) {
        double m = median(nanos);
        List<Long> s = new ArrayList<>(nanos);
        Collections.sort(s);
        System.out.printf("  %-46s median %.3f ms  p90 %.3f ms  %.2fx%n", what, m,
                s.get((int) (s.size() * 0.9)) / 1e6, m / baseline);
    }

    /** An authority that grants every call at once: recover()'s own share, without a helper. */
    private static final class Immediate implements Authority {
        @Override
        public void start(String runId) {
        }

        @Override
        public byte[] sign(String runId, byte[] payload) throws IOException {
            throw new IOException("not in this benchmark");
        }

        @Override
        public void resume(String runId) {
        }

        @Override
        public void release(String runId) {
        }

        @Override
        public RunView inspect(String runId) {
            return new RunView(runId, spice.authority.snapshot.contract.RunPhase.ACTIVE, 1, true, false);
        }

        @Override
        public ImportView prepareImport(byte[] envelope) throws IOException {
            try {
                Envelope e = Envelope.parse(envelope);
                return new ImportView("imp-" + e.runId(), e.runId(), e.lastSequence(), e.lastSequence() + 1);
            } catch (spice.authority.snapshot.envelope.EnvelopeRejectedException x) {
                throw new IOException(x.getMessage());
            }
        }

        @Override
        public void consume(ImportView tx) {
        }

        @Override
        public void activate(ImportView tx) {
        }

        @Override
        public void abortImport(ImportView tx) {
        }
    }
}
