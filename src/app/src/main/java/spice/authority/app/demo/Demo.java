package spice.authority.app.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RawJson;
import spice.authority.host.RunView;
import spice.authority.host.Session;
import spice.authority.host.demo.DemoHost;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.host.demo.JsonLine;
import spice.authority.snapshot.contract.ProblemCode;
import spice.authority.snapshot.contract.RunPhase;

/**
 * {@code spice-authority demo}: real host processes of the scripted agent against a helper; one
 * is killed with SIGKILL, another recovers the run (RFC 0007's host half, end to end).
 *
 * <p>Guarantees: with no socket given it starts its own helper on a fresh 0700 temporary
 * directory and removes the helper, the hosts and the directory at the end, on every path. The
 * last output line is {@code DemoResult}; {@link #run()} returns true only when every check held.
 */
public final class Demo {
    /** The two scenarios. */
    public enum Scenario {
        SUSPENDED("suspended"), IN_FLIGHT("in-flight"), RESTART("restart");

        final String label;

        Scenario(String label) {
            this.label = label;
        }

        public static Scenario of(String s) {
            for (Scenario v : values()) {
                if (v.label.equals(s)) {
                    return v;
                }
            }
            throw new IllegalArgumentException("unknown scenario '" + s + "': use suspended, in-flight or restart");
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static final long STEP_TIMEOUT_S = 60;

    private final Scenario scenario;
    private final Path socket;
    private final Output out;
    private final List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Process> processes = java.util.Collections.synchronizedList(new ArrayList<>());
    private Path tmp;
    private Process helper;
    private long killToResumeMs = -1;
    private final Path keep;
    private final SnapshotFormat format;
    private Map<String, Object> counts = Map.of();

    public Demo(Scenario scenario, Path socket, boolean json, PrintWriter writer) {
        this(scenario, socket, null, json, writer);
    }

    /**
     * With {@code keep} (null: none), the scenario's stores and ledger are left in that directory
     * (created 0700; it must not exist or be empty) for inspection.
     */
    public Demo(Scenario scenario, Path socket, Path keep, boolean json, PrintWriter writer) {
        this(scenario, socket, keep, SnapshotFormat.V1ALPHA2, json, writer);
    }

    /**
     * The scenario with host engines that write and import {@code format} (v1alpha3 with the demo's
     * workspace fingerprint); the helper must sign that format.
     */
    public Demo(Scenario scenario, Path socket, Path keep, SnapshotFormat format, boolean json, PrintWriter writer) {
        this.scenario = scenario;
        this.socket = socket;
        this.keep = keep;
        this.format = java.util.Objects.requireNonNull(format, "format");
        this.out = new Output(writer, json);
    }

    /** Runs the scenario; true when every check held. The last line is printed after the clean-up. */
    public boolean run() {
        long demoPid = ProcessHandle.current().pid();
        String runId = "demo-" + scenario.label + "-" + hex4();
        Thread onSignal = Thread.ofPlatform().unstarted(this::cleanUp); // Ctrl-C, SIGTERM
        Runtime.getRuntime().addShutdownHook(onSignal);
        try {
            tmp = Files.createTempDirectory("spice-authority-demo-", PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            scenario(demoPid, runId);
        } catch (IOException | RuntimeException e) {
            failures.add(e.getClass().getSimpleName() + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failures.add("interrupted");
        } finally {
            cleanUp();
            try {
                Runtime.getRuntime().removeShutdownHook(onSignal);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway; cleanUp is idempotent
            }
        }
        return finish(demoPid, runId, killToResumeMs);
    }

    private void scenario(long demoPid, String runId) throws IOException, InterruptedException {
        Path sock = socket;
        if (sock == null) {
            sock = tmp.resolve("authority.sock");
            helper = startHelper(tmp.resolve("authority"), sock);
            out.note("demo", demoPid, "started its own helper (pid " + helper.pid() + ") on " + tmp);
        } else {
            out.note("demo", demoPid, "using the helper on " + sock);
        }
        if (scenario == Scenario.RESTART) {
            Path work = keep == null ? tmp : keptDirectory(keep);
            counts = new RestartScenario(out, failures, processes, format).run(demoPid, runId, sock, work);
            if (keep != null) {
                out.note("demo", demoPid, "the store and ledger are kept in " + work
                        + " (spice-authority host-store inspect " + work.resolve("host-store").resolve("host.db") + ")");
            }
            return;
        }
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).build();
        Path envelope = tmp.resolve("envelope.pb");
        Path ledger = tmp.resolve("ledger.txt");
        out.note("demo", demoPid, "run " + runId + ": host A runs the scripted agent (4 turns, 2 tools; snapshots "
                + format.version() + ")");

        // Host A: runs, suspends, and is killed.
        HostProcess a = HostProcess.start("A", DemoHost.class.getName(), hostArgs(sock, "A", role(), runId, envelope, ledger), processes);
        Predicate<Map<String, Object>> killPoint = scenario == Scenario.SUSPENDED
                ? l -> "RunSuspended".equals(l.get("event"))
                : l -> "ToolCallStarted".equals(l.get("event")) && "append_ledger".equals(l.get("tool"))
                        && Long.valueOf(2).equals(l.get("turn"));
        Map<String, Object> last = a.relayUntil(out, killPoint);
        if (last == null) {
            failures.add("host A ended before the kill point: " + a.stderrTail());
            return;
        }
        long suspendedSeq = a.lastSuspendedSeq;
        if (scenario == Scenario.IN_FLIGHT) {
            // Kill once the call's side effect is on disk and its answer is still to come.
            awaitLedgerLine(ledger, runId + " t2-write");
        }
        a.process.destroyForcibly(); // SIGKILL
        long killedAt = System.nanoTime();
        boolean ended = a.process.waitFor(STEP_TIMEOUT_S, TimeUnit.SECONDS);
        Integer exit = ended ? a.process.exitValue() : null;
        out.line(JsonLine.of("A", a.process.pid(), "Killed").put("signal", "SIGKILL").put("run_id", runId)
                .put("exit_code", exit));
        if (exit == null || exit != 128 + 9) {
            failures.add("host A did not die of SIGKILL (exit " + exit + ")");
            return;
        }

        // Host B: a new process imports the stored envelope.
        out.note("demo", demoPid, "host B, a new process, imports the stored envelope");
        HostProcess b = HostProcess.start("B", DemoHost.class.getName(), hostArgs(sock, "B", "import", runId, envelope, ledger), processes);
        boolean sawRunStarted = false;
        Long resumedSeq = null;
        String refusedCode = null;
        Map<String, Object> l;
        while ((l = b.next()) != null) {
            out.relay(l);
            String ev = (String) l.get("event");
            switch (ev) {
                case "RunStarted" -> sawRunStarted = true;
                case "RunResumed" -> {
                    resumedSeq = (Long) l.get("seq");
                    killToResumeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                }
                case "ImportRefused" -> refusedCode = (String) l.get("code");
                case "HostFailed" -> failures.add("host B failed: " + l.get("error"));
                default -> { }
            }
        }
        int bExit = b.waitExit();
        List<String> ledgerLines = Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
        checkLedgerOnce(ledgerLines);
        if (sawRunStarted) {
            failures.add("host B emitted a second RunStarted");
        }
        Session session = client.openSession();
        try {
            if (scenario == Scenario.SUSPENDED) {
                expect(bExit == 0, "host B exited " + bExit + ": " + b.stderrTail());
                expect(resumedSeq != null && resumedSeq == suspendedSeq + 1,
                        "RunResumed at " + resumedSeq + ", expected last_sequence+1 = " + (suspendedSeq + 1));
                expect(ledgerLines.size() == 4, "the ledger has " + ledgerLines.size() + " entries, expected 4 (one per turn)");
                RunView v = client.run(runId);
                expect(v.phase() == RunPhase.COMPLETED, "the helper shows run " + runId + " " + v.phase() + ", expected COMPLETED");
            } else {
                // The helper's record is ACTIVE at a later generation than the envelope's claim:
                // the one secret-safe verification failure, never busy (A is dead) or anything else.
                expect(bExit == DemoHost.IMPORT_REFUSED && ProblemCode.VERIFICATION_FAILED.wire().equals(refusedCode),
                        "host B's import was not refused by verification (exit " + bExit + ", code " + refusedCode + ")");
                expect(resumedSeq == null, "host B resumed a run whose tool call was in flight");
                expect(ledgerLines.size() == 2, "the ledger has " + ledgerLines.size()
                        + " entries, expected 2 (turn 1's, and turn 2's in-flight call once)");
                RunView before = client.run(runId);
                expect(before.phase() == RunPhase.ACTIVE && !before.owned(),
                        "before the abandon the helper shows run " + runId + " " + before.phase()
                                + (before.owned() ? " (owned)" : "") + ", expected ACTIVE and not owned");
                out.note("demo", demoPid, "the run is " + before.phase() + " and not owned; the operator ends it: "
                        + "spice-authority runs abandon " + runId + " --yes");
                RunView v = client.abandon(session, runId);
                out.line(JsonLine.of("demo", demoPid, "RunAbandoned").put("run_id", runId).put("phase", v.phase().name())
                        .put("run_generation", v.runGenerationText()));
                expect(v.phase() == RunPhase.CANCELLED, "abandon left run " + runId + " " + v.phase());
            }
        } finally {
            client.closeSession(session);
        }
    }

    /** Kills and reaps every child, stops the helper, removes the directory; idempotent. */
    private synchronized void cleanUp() {
        List<Process> children;
        synchronized (processes) {
            children = new ArrayList<>(processes);
        }
        for (Process p : children) {
            p.destroyForcibly();
        }
        for (Process p : children) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    failures.add("host process " + p.pid() + " did not end");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        processes.clear();
        if (helper != null) {
            if (!stopHelper(helper)) {
                failures.add("the demo's helper (pid " + helper.pid() + ") did not stop");
            }
            helper = null;
        }
        if (tmp != null) {
            String problem = deleteTree(tmp);
            if (problem != null) {
                failures.add(problem);
            }
            tmp = null;
        }
    }

    /** {@code dir}, created 0700 when missing; refused when it holds anything. */
    private static Path keptDirectory(Path dir) throws IOException {
        if (Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isDirectory(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("--keep " + dir + " is not a directory");
            }
            try (var entries = Files.list(dir)) {
                if (entries.findAny().isPresent()) {
                    throw new IOException("--keep " + dir + " is not empty; give a new or empty directory");
                }
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            return dir.toAbsolutePath();
        }
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        return dir.toAbsolutePath();
    }

    private static String hex4() {
        byte[] b = new byte[4];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private List<String> hostArgs(Path sock, String proc, String role, String runId, Path envelope, Path ledger) {
        return List.of("--socket", sock.toString(), "--proc", proc, "--role", role, "--run-id", runId,
                "--envelope", envelope.toString(), "--ledger", ledger.toString(), "--format", format.version());
    }

    private String role() {
        return scenario == Scenario.SUSPENDED ? "first" : "first-in-flight";
    }

    private boolean finish(long demoPid, String runId, long killToResumeMs) {
        boolean ok = failures.isEmpty();
        JsonLine result = JsonLine.of("demo", demoPid, "DemoResult").put("ok", ok).put("scenario", scenario.label)
                .put("format", format.version()).put("run_id", runId);
        if (killToResumeMs >= 0) {
            result.put("kill_to_resume_ms", killToResumeMs);
        }
        for (Map.Entry<String, Object> c : counts.entrySet()) {
            result.put(c.getKey(), c.getValue());
        }
        if (!ok) {
            result.put("failures", String.join("; ", failures));
        }
        out.line(result);
        return ok;
    }

    private void expect(boolean holds, String failure) {
        if (!holds) {
            failures.add(failure);
        }
    }

    static void awaitLedgerLine(Path ledger, String line) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_TIMEOUT_S);
        while (!(Files.exists(ledger) && Files.readAllLines(ledger).contains(line))) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the in-flight call wrote nothing to the ledger in " + STEP_TIMEOUT_S + " s");
            }
            Thread.sleep(10);
        }
    }

    private void checkLedgerOnce(List<String> lines) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String s : lines) {
            if (!seen.add(s)) {
                failures.add("a tool call ran twice: " + s);
            }
        }
    }

    private Process startHelper(Path authorityDir, Path sock) throws IOException, InterruptedException {
        List<String> cmd = List.of(HostLauncher.java().toString(), "-XX:+UseSerialGC", "-Xmx128m", "-Xss512k",
                "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED", "-jar", HostLauncher.helperRunner().toString(),
                "serve", "--authority-dir", authorityDir.toString(), "--socket", sock.toString());
        Path log = tmp.resolve("helper.log");
        Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        processes.add(p);
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        BlockingQueue<String> first = new LinkedBlockingQueue<>();
        Thread.ofVirtual().start(() -> {
            try {
                String line = r.readLine();
                first.add(line == null ? "" : line);
                while (r.readLine() != null) {
                    // drain
                }
            } catch (IOException e) {
                first.add("");
            }
        });
        String line = first.poll(STEP_TIMEOUT_S, TimeUnit.SECONDS);
        if (line == null || !line.startsWith("listening on ")) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
            String tail = Files.exists(log) ? Files.readString(log).strip() : "";
            tail = tail.substring(Math.max(0, tail.length() - 600));
            throw new IOException("the demo's helper did not start (exit " + (p.isAlive() ? "none yet" : p.exitValue())
                    + "): " + (tail.isEmpty() ? "no output" : tail));
        }
        synchronized (this) {
            helper = p;
            processes.remove(p);
        }
        return p;
    }

    private static boolean stopHelper(Process helper) {
        helper.destroy(); // SIGTERM: drains and releases the directory
        try {
            if (helper.waitFor(15, TimeUnit.SECONDS)) {
                return true;
            }
            helper.destroyForcibly();
            helper.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            helper.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** Removes the demo's directory; a problem (null when none) names what was left. */
    private static String deleteTree(Path dir) {
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
            return null;
        } catch (IOException | java.io.UncheckedIOException e) {
            return "could not remove " + dir + ": " + e.getMessage();
        }
    }
}
