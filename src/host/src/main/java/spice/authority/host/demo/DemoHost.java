package spice.authority.host.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.ImportView;
import spice.authority.host.engine.Authority;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineException;
import spice.authority.host.engine.ForwardingAuthority;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.ImportRefusedException;
import spice.authority.host.engine.ImportUncertainException;
import spice.authority.host.engine.Run;
import spice.authority.host.engine.StaticToolPlan;
import spice.authority.snapshot.SnapshotFormat;

/**
 * One host process of {@code spice-authority demo}: the scripted agent on the reference engine,
 * talking to the helper on a Unix socket, printing one JSON line per event on standard output.
 *
 * <pre>
 * DemoHost --socket PATH --proc A|B --role first|first-in-flight|import
 *          --run-id ID --envelope FILE --ledger FILE [--format v1alpha2|v1alpha3]
 * </pre>
 * The engines write and import the snapshot format given (default v1alpha2; v1alpha3 with the
 * demo's workspace fingerprint).
 * <ul>
 *   <li>{@code first}: starts the run, runs turns 1–2, suspends, stores the envelope (atomically),
 *       then waits to be killed.
 *   <li>{@code first-in-flight}: starts the run, runs turn 1, suspends and stores the envelope,
 *       resumes locally and runs turn 2, whose mutating call never returns.
 *   <li>{@code import}: imports the stored envelope, runs the remaining turns and completes the
 *       run; exit 0. A refused import prints ImportRefused and exits 3.
 * </ul>
 * Every host also exits when its standard input closes (the demo is gone), even while a tool call
 * blocks, so it never outlives the demo.
 */
public final class DemoHost {
    /** Exit code of an import the engine or helper refused. */
    public static final int IMPORT_REFUSED = 3;

    private final String proc;
    private final long pid = ProcessHandle.current().pid();
    private final PrintStream out;

    private DemoHost(String proc, PrintStream out) {
        this.proc = proc;
        this.out = out;
    }

    public static void main(String[] args) {
        String socket = null, proc = null, role = null, runId = null, envelope = null, ledger = null;
        String format = "v1alpha2";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--socket" -> socket = args[i + 1];
                case "--proc" -> proc = args[i + 1];
                case "--role" -> role = args[i + 1];
                case "--run-id" -> runId = args[i + 1];
                case "--envelope" -> envelope = args[i + 1];
                case "--ledger" -> ledger = args[i + 1];
                case "--format" -> format = args[i + 1];
                default -> usage("unknown option " + args[i]);
            }
        }
        if (socket == null || proc == null || role == null || runId == null || envelope == null || ledger == null
                || args.length % 2 != 0) {
            usage("every option is required");
        }
        SnapshotFormat snapshotFormat = null;
        try {
            snapshotFormat = ScriptedAgent.format(format);
        } catch (IllegalArgumentException e) {
            usage(e.getMessage());
        }
        exitWhenInputCloses();
        DemoHost host = new DemoHost(proc, new PrintStream(System.out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = host.run(Path.of(socket), role, runId, Path.of(envelope), Path.of(ledger), snapshotFormat);
        } catch (InterruptedException e) {
            code = 1;
        } catch (EngineException | IOException | RuntimeException e) {
            host.emit(JsonLine.of(proc, host.pid, "HostFailed").put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
            code = 1;
        }
        System.exit(code);
    }

    /**
     * A host process of a demo never outlives the demo: when the demo's end of its standard input
     * closes, it stops at once (also while a tool call blocks).
     */
    public static void exitWhenInputCloses() {
        Thread.ofPlatform().daemon().start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // discard
                }
            } catch (IOException ignored) {
                // treated as closed
            }
            Runtime.getRuntime().halt(1);
        });
    }

    private static void usage(String why) {
        System.err.println("DemoHost: " + why);
        System.err.println("usage: DemoHost --socket PATH --proc A|B --role first|first-in-flight|import --run-id ID --envelope FILE --ledger FILE [--format v1alpha2|v1alpha3]");
        System.exit(2);
    }

    private synchronized void emit(JsonLine line) {
        out.println(line);
    }

    private void onEvent(Event e) {
        switch (e.type()) {
            case MESSAGE_APPENDED -> { } // the demo's timeline shows turns and tools, not messages
            case RUN_SUSPENDED -> { } // printed once the envelope is stored
            default -> {
                JsonLine l = JsonLine.of(proc, pid, e.type().display()).put("run_id", e.runId()).put("seq", e.sequence());
                if (e.turn() > 0) {
                    l.put("turn", e.turn());
                }
                l.put("call_id", e.callId()).put("tool", e.toolName());
                emit(l);
            }
        }
    }

    private int run(Path socket, String role, String runId, Path envelopeFile, Path ledger, SnapshotFormat format)
            throws EngineException, IOException, InterruptedException {
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(socket)).build();
        boolean inFlight = role.equals("first-in-flight");
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(ledger, inFlight ? "t2-write" : null)));
        switch (role) {
            case "first", "first-in-flight" -> {
                Engine engine = Engine.builder(ScriptedAgent.model(), plan).format(format)
                        .identity(ScriptedAgent.identity(format)).listener(this::onEvent).open(client);
                Run run = engine.start(runId, ScriptedAgent.DEFINITION, "Keep a ledger of four turns.");
                int turns = inFlight ? 1 : 2;
                for (int i = 0; i < turns; i++) {
                    run.runTurn();
                }
                byte[] envelope = run.suspend();
                storeAtomically(envelopeFile, envelope);
                emit(JsonLine.of(proc, pid, "RunSuspended").put("run_id", runId).put("seq", run.events().head())
                        .put("envelope_bytes", envelope.length));
                if (inFlight) {
                    run.resumeLocal();
                    run.runTurn(); // its mutating call never returns
                }
                // Wait to be killed (the stdin watcher ends this process if the demo is gone).
                new java.util.concurrent.CountDownLatch(1).await();
                return 0;
            }
            case "import" -> {
                Engine engine = Engine.builder(ScriptedAgent.model(), plan).decorate(Announcing::new).format(format)
                        .identity(ScriptedAgent.identity(format)).listener(this::onEvent).open(client);
                byte[] envelope = Files.readAllBytes(envelopeFile);
                Run run;
                try {
                    run = engine.importRun(envelope);
                } catch (ImportRefusedException e) {
                    emit(JsonLine.of(proc, pid, "ImportRefused").put("run_id", runId)
                            .put("code", e.helperCode() != null ? e.helperCode() : e.reason().name().toLowerCase(java.util.Locale.ROOT))
                            .put("detail", e.getMessage()));
                    return IMPORT_REFUSED;
                } catch (ImportUncertainException e) {
                    // Not a refusal: the run may be IMPORTING for this host. Never retried; the demo fails.
                    emit(JsonLine.of(proc, pid, "HostFailed").put("run_id", runId)
                            .put("error", "import uncertain: " + e.getMessage()));
                    return 1;
                }
                while (run.completedTurns() < run.definition().maxTurns()) {
                    run.runTurn();
                }
                run.complete(); // the COMPLETED tombstone's envelope: inspectable, never resumable
                engine.close(); // and its session
                return 0;
            }
            default -> throw new IllegalArgumentException("unknown role " + role);
        }
    }

    /** Prints ImportPrepared once the helper verified the envelope and locked the run. */
    private final class Announcing extends ForwardingAuthority {
        Announcing(Authority inner) {
            super(inner);
        }

        @Override
        public ImportView prepareImport(byte[] envelope) throws IOException {
            ImportView tx = super.prepareImport(envelope);
            emit(JsonLine.of(proc, pid, "ImportPrepared").put("run_id", tx.runId()).put("seq", tx.lastSequence()));
            return tx;
        }
    }

    /** Writes {@code bytes} to {@code file} durably: a temporary file, fsync, rename, fsync of the directory. */
    static void storeAtomically(Path file, byte[] bytes) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, ".envelope-", ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
