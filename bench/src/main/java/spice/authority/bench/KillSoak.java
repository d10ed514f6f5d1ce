package spice.authority.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kill -9 soak (issue 12): hosts loop through the whole life cycle of runs against a real
 * helper while it is SIGKILLed and restarted again and again; after each restart and at the end
 * every run is checked against what the helper acknowledged.
 *
 * <pre>java -cp bench/target/benchmarks.jar spice.authority.bench.KillSoak [--kills 30] [--hosts 4]
 *      [--runner src/app/target/quarkus-app/quarkus-run.jar] [--dir DIR]</pre>
 *
 * <p>Each host, in a loop: start a run, suspend it (sign), resume, suspend again, release the
 * lease and put the envelope in a shared pool; any host (often several at once) takes envelopes
 * from the pool and imports them (prepare, consume, activate), then finishes the run with a
 * terminal snapshot. After a kill, a host brings its current run forward only by the documented
 * paths: an identical re-post re-issues a lost envelope of a SUSPENDED run, which then imports;
 * an ACTIVE or IMPORTING run whose owner died is abandoned (CANCELLED).
 *
 * <p>Reported, all of which must be 0: acknowledged transitions lost (the record on disk is
 * older than what the helper answered), illegal or unreadable records, double imports (two
 * activations of one envelope), temp files left after a restart, and runs stranded without a way
 * forward (a documented path refused).
 */
public final class KillSoak {
    static final String TEMPLATE = "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"RUN\",\"definition\":{\"name\":\"test\","
            + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\",\"parts\":"
            + "[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
            + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":"
            + "\"generation-1\",\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},"
            + "\"seen_interaction_ids\":[],\"last_sequence\":SEQ,\"status\":\"STATUS\"}";

    private final Path dir;
    private final Path socket;
    private final String runner;
    private volatile Process helper;
    private final AtomicBoolean stop = new AtomicBoolean();
    /** Per run: the acknowledged generations and phases, in order (a run's history). */
    private final Map<String, Journal> journals = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Envelope> pool = new ConcurrentLinkedQueue<>();
    private final Map<String, AtomicInteger> activations = new ConcurrentHashMap<>();
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger completedRuns = new AtomicInteger();
    private final AtomicInteger abandoned = new AtomicInteger();
    private final AtomicInteger reissued = new AtomicInteger();
    private final List<String> lost = new ArrayList<>();
    private final List<String> stranded = new ArrayList<>();
    private final List<String> doubles = java.util.Collections.synchronizedList(new ArrayList<>());
    private int tempFilesAfterRestart;
    private int unreadable;

    record Envelope(String runId, byte[] bytes, long generation) {}

    /** What the helper acknowledged of one run, and the payload of its last suspension. */
    static final class Journal {
        long generation;
        String phase = "NONE";
        String suspendedPayload;
        /** A transition sent whose answer never came: its outcome is unknown. */
        String inFlight;

        synchronized void ack(String phase, long generation) {
            this.phase = phase;
            this.generation = generation;
            this.inFlight = null;
        }
    }

    KillSoak(Path dir, String runner) {
        this.dir = dir;
        this.socket = dir.resolve("ep/s.sock");
        this.runner = runner;
    }

    public static void main(String[] args) throws Exception {
        int kills = 30;
        int hosts = 4;
        String runner = "src/app/target/quarkus-app/quarkus-run.jar";
        Path dir = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kills" -> kills = Integer.parseInt(args[++i]);
                case "--hosts" -> hosts = Integer.parseInt(args[++i]);
                case "--runner" -> runner = args[++i];
                case "--dir" -> dir = Path.of(args[++i]);
                default -> {
                    System.err.println("usage: KillSoak [--kills N] [--hosts N] [--runner JAR] [--dir DIR]");
                    System.exit(2);
                }
            }
        }
        boolean temp = dir == null;
        if (temp) {
            dir = Files.createTempDirectory("spice-soak-");
        }
        KillSoak soak = new KillSoak(dir, runner);
        int exit;
        try {
            exit = soak.run(kills, hosts);
        } finally {
            // Also on a failure: no helper, socket or directory outlives the soak.
            if (soak.helper != null && soak.helper.isAlive()) {
                soak.helper.destroyForcibly();
                soak.helper.waitFor(30, TimeUnit.SECONDS);
            }
            if (temp) {
                deleteTree(dir);
            }
        }
        System.exit(exit);
    }

    int run(int kills, int hosts) throws Exception {
        sessionsNeeded = hosts + 1;
        startHelper();
        List<Thread> ts = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            int id = h;
            ts.add(Thread.ofPlatform().name("host-" + h).start(() -> host(id)));
        }
        for (int k = 1; k <= kills; k++) {
            Thread.sleep(ThreadLocalRandom.current().nextLong(800, 2500));
            helper.destroyForcibly(); // SIGKILL
            helper.waitFor();
            startHelper();
            int tmp = tempFiles();
            tempFilesAfterRestart += tmp;
            System.out.printf("kill %2d: restarted; %d requests so far, %d runs completed, temp files after restart: %d%n",
                    k, requests.get(), completedRuns.get(), tmp);
        }
        Thread.sleep(1500);
        stop.set(true);
        for (Thread t : ts) {
            t.join(60_000);
        }
        finalCheck();
        helper.destroy();
        helper.waitFor(30, TimeUnit.SECONDS);
        System.out.println();
        System.out.printf("kills %d, requests %d, runs completed %d, abandoned %d, envelopes re-issued %d%n",
                kills, requests.get(), completedRuns.get(), abandoned.get(), reissued.get());
        long doubleImports = activations.values().stream().filter(n -> n.get() > 1).count();
        System.out.printf("acknowledged transitions lost: %d%n", lost.size());
        System.out.printf("illegal or unreadable records: %d%n", unreadable);
        System.out.printf("double imports: %d%n", doubleImports);
        System.out.printf("temp files left after restart: %d%n", tempFilesAfterRestart);
        System.out.printf("runs stranded without a way forward: %d%n", stranded.size());
        lost.forEach(l -> System.out.println("  lost: " + l));
        stranded.forEach(l -> System.out.println("  stranded: " + l));
        doubles.forEach(l -> System.out.println("  double: " + l));
        return lost.isEmpty() && unreadable == 0 && doubleImports == 0 && tempFilesAfterRestart == 0 && stranded.isEmpty() ? 0 : 1;
    }

    // ---- the helper ---------------------------------------------------------------------------

    private int sessionsNeeded = 8;

    private void startHelper() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (runner.endsWith(".jar")) {
            cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:+UseSerialGC",
                    "-Xmx128m", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED", "-jar", runner));
        } else {
            cmd.add(runner);
        }
        cmd.addAll(List.of("serve", "--authority-dir", dir.resolve("auth").toString(), "--socket", socket.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        // The soak's hosts and its final check all live in this one process.
        pb.environment().put("SPICE_AUTHORITY_MAX_SESSIONS_PER_PROCESS", Integer.toString(Math.max(8, sessionsNeeded)));
        Process p = pb.redirectError(dir.resolve("helper.log").toFile().exists()
                ? ProcessBuilder.Redirect.appendTo(dir.resolve("helper.log").toFile())
                : ProcessBuilder.Redirect.to(dir.resolve("helper.log").toFile())).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("listening on")) {
            throw new IOException("helper did not start; see " + dir.resolve("helper.log"));
        }
        helper = p;
    }

    private int tempFiles() throws IOException {
        try (var s = Files.list(dir.resolve("auth"))) {
            return (int) s.filter(p -> p.getFileName().toString().endsWith(".tmp")).count();
        }
    }

    // ---- a host -------------------------------------------------------------------------------

    private void host(int id) {
        String session = null;
        String current = null; // the run this host was working on when a call went unanswered
        int n = 0;
        while (!stop.get()) {
            try {
                if (session == null) {
                    session = openSession();
                    if (current != null) {
                        recover(session, current);
                        current = null;
                    }
                }
                Envelope imported = pool.poll();
                if (imported != null && ThreadLocalRandom.current().nextBoolean()) {
                    current = imported.runId;
                    importAndFinish(session, imported);
                    current = null;
                    continue;
                }
                if (imported != null) {
                    pool.add(imported); // leave it to another host: several may race for it
                }
                String runId = "h" + id + "-" + (n++);
                current = runId;
                lifeCycle(session, runId);
                current = null;
            } catch (Dropped | IOException d) {
                session = null; // the helper died: its sessions with it
                waitForHelper();
            }
        }
    }

    /** Thrown when a call had no answer (the helper was killed): its outcome is unknown. */
    static final class Dropped extends Exception {
        private static final long serialVersionUID = 1L;

        Dropped() {
            super(null, null, false, false);
        }
    }

    private void lifeCycle(String session, String runId) throws Dropped, IOException {
        Journal j = journals.computeIfAbsent(runId, k -> new Journal());
        Response r = transition(j, "start", () -> call("POST", "/v1/runs", session, "application/json",
                ("{\"run_id\":\"" + runId + "\"}").getBytes(StandardCharsets.UTF_8)));
        if (r.status != 200) {
            recover(session, runId);
            return;
        }
        j.ack("ACTIVE", 1);
        if (suspend(session, j, runId, 7) == null || !resume(session, j, runId)) {
            recover(session, runId);
            return;
        }
        Response env = suspend(session, j, runId, 9);
        if (env == null) {
            recover(session, runId);
            return;
        }
        Response rel = call("DELETE", "/v1/runs/" + runId + "/lease", session, null, null);
        if (rel.status != 204) {
            recover(session, runId);
            return;
        }
        pool.add(new Envelope(runId, env.body, j.generation));
    }

    /** Suspends at {@code seq}; the envelope, or null when refused. */
    private Response suspend(String session, Journal j, String runId, long seq) throws Dropped, IOException {
        String payload = payload(runId, "suspended", seq);
        synchronized (j) {
            j.suspendedPayload = payload; // what a re-post must send, whether the answer comes or not
        }
        Response r = transition(j, "sign", () -> call("POST", "/v1/runs/" + runId + "/snapshots", session,
                "application/vnd.spice.snapshot.v1alpha2+json", payload.getBytes(StandardCharsets.UTF_8)));
        if (r.status != 200) {
            return null;
        }
        j.ack("SUSPENDED", j.generation);
        return r;
    }

    private boolean resume(String session, Journal j, String runId) throws Dropped, IOException {
        Response r = transition(j, "resume", () -> call("POST", "/v1/runs/" + runId + "/resume", session, null, new byte[0]));
        if (r.status != 200) {
            return false;
        }
        j.ack("ACTIVE", gen(r));
        return true;
    }

    private void importAndFinish(String session, Envelope e) throws Dropped, IOException {
        Journal j = journals.get(e.runId);
        Response prep = call("POST", "/v1/imports", session, "application/x-protobuf", e.bytes);
        if (prep.status != 200) {
            return; // busy (another host holds it) or stale (already imported): not ours
        }
        String imp = field(prep.text(), "import");
        Response c = transition(j, "consume", () -> call("POST", "/v1/imports/" + imp + "/consume", session, null, new byte[0]));
        if (c.status != 200) {
            recover(session, e.runId);
            return;
        }
        j.ack("IMPORTING", gen(c));
        Response a = transition(j, "activate", () -> call("POST", "/v1/imports/" + imp + "/activate", session, null, new byte[0]));
        if (a.status != 200) {
            recover(session, e.runId);
            return;
        }
        if (activations.computeIfAbsent(e.runId + "@" + e.generation, k -> new AtomicInteger()).incrementAndGet() > 1) {
            doubles.add(e.runId + "@" + e.generation + ": activated again by " + Thread.currentThread().getName() + " as "
                    + a.text() + " after consume " + c.text());
        }
        j.ack("ACTIVE", gen(a));
        String done = payload(e.runId, "completed", 11);
        Response t = transition(j, "terminal", () -> call("POST", "/v1/runs/" + e.runId + "/snapshots", session,
                "application/vnd.spice.snapshot.v1alpha2+json", done.getBytes(StandardCharsets.UTF_8)));
        if (t.status != 200) {
            recover(session, e.runId);
            return;
        }
        j.ack("COMPLETED", j.generation);
        completedRuns.incrementAndGet();
    }

    interface Call {
        Response call() throws IOException, Dropped;
    }

    /** A durable transition: remembered as in flight until answered. */
    private Response transition(Journal j, String what, Call c) throws Dropped, IOException {
        synchronized (j) {
            j.inFlight = what;
        }
        Response r = c.call();
        if (r.status != 200) {
            synchronized (j) {
                if (!"uncertain".equals(field(r.text(), "code"))) {
                    j.inFlight = null; // a refusal that says nothing was written
                }
            }
        }
        return r;
    }

    /**
     * Brings a run whose life cycle was interrupted forward by the documented paths, once the
     * helper answers: SUSPENDED: the identical re-post re-issues the envelope, which goes to the
     * pool; ACTIVE or IMPORTING without a live owner: abandon. A refused path is a stranded run.
     */
    private void recover(String session, String runId) throws Dropped, IOException {
        Response v = call("GET", "/v1/runs/" + runId, null, null, null);
        if (v.status == 404) {
            return; // never written (a start that failed before its write)
        }
        if (v.status != 200) {
            throw new IOException("helper not answering");
        }
        String phase = field(v.text(), "phase");
        Journal j = journals.get(runId);
        switch (phase) {
            case "SUSPENDED" -> {
                String payload;
                synchronized (j) {
                    payload = j.suspendedPayload;
                }
                Response r = call("POST", "/v1/runs/" + runId + "/snapshots", session,
                        "application/vnd.spice.snapshot.v1alpha2+json", payload.getBytes(StandardCharsets.UTF_8));
                if (r.status == 200) {
                    reissued.incrementAndGet();
                    j.ack("SUSPENDED", Long.parseLong(field(v.text(), "run_generation")));
                    pool.add(new Envelope(runId, r.body, j.generation));
                } else if (r.status == 409 && "busy".equals(field(r.text(), "code"))) {
                    return; // a live session owns it after all
                } else {
                    stranded(runId, "SUSPENDED, re-post refused: " + r.text());
                }
            }
            case "ACTIVE", "IMPORTING" -> {
                if ("true".equals(field(v.text(), "owned"))) {
                    return; // a live session holds it
                }
                Response r = call("POST", "/v1/runs/" + runId + "/abandon", session, null, new byte[0]);
                if (r.status == 200) {
                    abandoned.incrementAndGet();
                    j.ack("CANCELLED", Long.parseLong(field(r.text(), "run_generation")));
                } else if (r.status != 409 || !"busy".equals(field(r.text(), "code"))) {
                    stranded(runId, phase + ", abandon refused: " + r.text());
                }
            }
            default -> {
                // terminal: nothing to do
            }
        }
    }

    private synchronized void stranded(String runId, String why) {
        stranded.add(runId + ": " + why);
    }

    private String openSession() throws IOException, Dropped {
        Response r = call("POST", "/v1/sessions", null, null, new byte[0]);
        if (r.status != 200) {
            throw new IOException("no session: " + r.status);
        }
        return field(r.text(), "session");
    }

    private void waitForHelper() {
        while (!stop.get()) {
            try {
                if (call("GET", "/q/health/ready", null, null, null).status == 200) {
                    return;
                }
            } catch (IOException | Dropped e) {
                // not yet
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    // ---- checks -------------------------------------------------------------------------------

    /**
     * After the last restart, with no host running: every run's record against its journal, the
     * unreadable count, and a last attempt to bring every unfinished run forward.
     */
    private void finalCheck() throws Exception {
        Response list = call("GET", "/v1/runs", null, null, null);
        Map<String, String[]> onDisk = new HashMap<>();
        Matcher m = Pattern.compile("\\{\"run_id\":\"([^\"]+)\",\"phase\":\"([A-Z]+)\",\"run_generation\":\"?(\\d+)\"?").matcher(list.text());
        while (m.find()) {
            onDisk.put(m.group(1), new String[] {m.group(2), m.group(3)});
        }
        for (Map.Entry<String, Journal> e : journals.entrySet()) {
            Journal j = e.getValue();
            String[] disk = onDisk.get(e.getKey());
            if (j.generation == 0) {
                continue; // never acknowledged
            }
            if (disk == null) {
                // Not in the listing: ask for the run itself, to tell a lost record from a short listing.
                Response one = call("GET", "/v1/runs/" + e.getKey(), null, null, null);
                lost.add(e.getKey() + ": acknowledged " + j.phase + "@" + j.generation + ", not in GET /v1/runs; GET /v1/runs/"
                        + e.getKey() + " answers " + one.status + " " + one.text());
                continue;
            }
            long g = Long.parseLong(disk[1]);
            boolean same = g == j.generation && disk[0].equals(j.phase);
            boolean later = g > j.generation || (g == j.generation && j.inFlight != null);
            if (!same && !later) {
                lost.add(e.getKey() + ": acknowledged " + j.phase + "@" + j.generation + ", on disk " + disk[0] + "@" + g);
            }
        }
        Response auth = call("GET", "/v1/authority", null, null, null);
        String u = field(auth.text(), "unreadable");
        unreadable = u.isEmpty() ? 0 : Integer.parseInt(u);
        String session = openSession();
        for (String runId : onDisk.keySet()) {
            String phase = onDisk.get(runId)[0];
            if (phase.equals("ACTIVE") || phase.equals("IMPORTING") || phase.equals("SUSPENDED")) {
                Journal j = journals.computeIfAbsent(runId, k -> new Journal());
                if (phase.equals("SUSPENDED") && j.suspendedPayload == null) {
                    stranded(runId, "SUSPENDED with no payload known");
                    continue;
                }
                recover(session, runId);
            }
        }
    }

    // ---- HTTP over the Unix socket --------------------------------------------------------------

    record Response(int status, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private Response call(String method, String path, String session, String type, byte[] body) throws IOException, Dropped {
        requests.incrementAndGet();
        SocketChannel ch;
        try {
            ch = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            throw e; // not connected: nothing was sent
        }
        try (ch) {
            StringBuilder req = new StringBuilder(method).append(' ').append(path)
                    .append(" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
            if (session != null) {
                req.append("Spice-Session: ").append(session).append("\r\n");
            }
            if (type != null) {
                req.append("Content-Type: ").append(type).append("\r\n");
            }
            byte[] b = body == null ? new byte[0] : body;
            if (body != null) {
                req.append("Content-Length: ").append(b.length).append("\r\n");
            }
            req.append("\r\n");
            OutputStream out = Channels.newOutputStream(ch);
            out.write(req.toString().getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.flush();
            InputStream in = Channels.newInputStream(ch);
            byte[] all = in.readAllBytes();
            String head = new String(all, 0, Math.min(all.length, 64), StandardCharsets.US_ASCII);
            if (!head.startsWith("HTTP/1.1 ")) {
                throw new Dropped();
            }
            int status = Integer.parseInt(head.substring(9, 12));
            int split = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] content = split < 0 ? new byte[0] : java.util.Arrays.copyOfRange(all, split + 4, all.length);
            String headers = split < 0 ? "" : new String(all, 0, split, StandardCharsets.US_ASCII).toLowerCase(java.util.Locale.ROOT);
            if (headers.contains("transfer-encoding: chunked")) {
                content = dechunk(content);
            }
            return new Response(status, content);
        } catch (IOException e) {
            throw new Dropped();
        }
    }

    /** The body of a chunked answer (chunk-size lines removed). */
    private static byte[] dechunk(byte[] in) throws Dropped {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(in.length);
        int i = 0;
        while (true) {
            int eol = indexOf(java.util.Arrays.copyOfRange(in, i, in.length), "\r\n".getBytes(StandardCharsets.US_ASCII));
            if (eol < 0) {
                throw new Dropped(); // cut off
            }
            String size = new String(in, i, eol, StandardCharsets.US_ASCII).split(";")[0].trim();
            int n = Integer.parseInt(size, 16);
            i += eol + 2;
            if (n == 0) {
                return out.toByteArray();
            }
            if (i + n > in.length) {
                throw new Dropped();
            }
            out.write(in, i, n);
            i += n + 2;
        }
    }

    private static int indexOf(byte[] a, byte[] b) {
        outer:
        for (int i = 0; i + b.length <= a.length; i++) {
            for (int k = 0; k < b.length; k++) {
                if (a[i + k] != b[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    static String payload(String runId, String status, long seq) {
        return TEMPLATE.replace("RUN", runId).replace("SEQ", Long.toString(seq)).replace("STATUS", status);
    }

    /** A top-level member of a flat JSON answer (string or number), or "". */
    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*(\"([^\"]*)\"|(-?\\d+|true|false))").matcher(json);
        if (!m.find()) {
            return "";
        }
        return m.group(2) != null ? m.group(2) : m.group(3);
    }

    private static long gen(Response r) {
        return Long.parseLong(field(r.text(), "run_generation"));
    }

    static void deleteTree(Path root) throws IOException {
        try (var walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
