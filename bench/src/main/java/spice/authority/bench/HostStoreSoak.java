package spice.authority.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RunView;
import spice.authority.host.Session;

/**
 * The host store's kill -9 soak: real host JVMs ({@link SoakHost}) against a real helper, each
 * SIGKILLed at a random point of its work, each followed by a fresh process that opens the same
 * store and calls {@code recover()}. Runs reported as cut off are abandoned as an operator would.
 * A last process recovers and completes everything; then the ledger, the helper and the store
 * are checked.
 *
 * <pre>java -cp bench/target/benchmarks.jar spice.authority.bench.HostStoreSoak [--kills 200]
 *      [--runner src/app/target/quarkus-app/quarkus-run.jar] [--seed N] [--max-delay-ms 1500]</pre>
 *
 * <p>Reported: tool side effects executed twice (ledger lines seen twice), envelopes lost and runs
 * stranded (SUSPENDED at the helper after the last recovery, or ACTIVE and never reported),
 * unreadable stores and refused restores (all must be 0); runs resumed, completed and reported.
 */
public final class HostStoreSoak {
    private static final Pattern FIELD = Pattern.compile("\"(\\w+)\":\"([^\"]*)\"");

    private HostStoreSoak() {
    }

    public static void main(String[] args) throws Exception {
        int kills = 200;
        long seed = System.nanoTime();
        int maxDelayMs = 1500;
        Path runner = Path.of("src/app/target/quarkus-app/quarkus-run.jar");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kills" -> kills = Integer.parseInt(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--max-delay-ms" -> maxDelayMs = Integer.parseInt(args[++i]);
                case "--runner" -> runner = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Random random = new Random(seed);
        Path dir = Files.createTempDirectory("host-store-soak-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path sock = dir.resolve("h.sock");
        Path store = dir.resolve("store").resolve("host.db");
        Path ledger = dir.resolve("ledger.txt");
        String prefix = "soak";
        Process helper = new ProcessBuilder(java.toString(), "-XX:+UseSerialGC", "-Xmx128m", "--enable-native-access=ALL-UNNAMED",
                "-jar", runner.toString(), "serve", "--authority-dir", dir.resolve("authority").toString(), "--socket",
                sock.toString()).redirectError(dir.resolve("helper.log").toFile()).start();
        BufferedReader hout = new BufferedReader(new InputStreamReader(helper.getInputStream(), StandardCharsets.UTF_8));
        String first = hout.readLine();
        if (first == null || !first.startsWith("listening on")) {
            throw new IOException("the helper did not start: " + Files.readString(dir.resolve("helper.log")));
        }
        Thread.ofPlatform().daemon().start(() -> {
            try {
                while (hout.readLine() != null) {
                    // drain
                }
            } catch (IOException ignored) {
                // ended
            }
        });
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).build();
        Session operator = client.openSession();
        Map<String, Integer> reasons = new HashMap<>();
        int resumed = 0;
        int reported = 0;
        int refused = 0;
        int unreadable = 0;
        int abandoned = 0;
        Set<String> reportedRuns = new HashSet<>();
        long t0 = System.nanoTime();
        String cp = System.getProperty("java.class.path");
        try {
            for (int k = 0; k <= kills; k++) {
                boolean finish = k == kills;
                List<String> cmd = new ArrayList<>(List.of(java.toString(), "-XX:+UseSerialGC", "-Xmx64m",
                        "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED", "-cp", cp, SoakHost.class.getName(),
                        "--socket", sock.toString(), "--store", store.toString(), "--ledger", ledger.toString(), "--prefix",
                        prefix, "--seed", Long.toString(random.nextLong())));
                if (finish) {
                    cmd.add("--finish");
                }
                Process host = new ProcessBuilder(cmd).redirectError(finish ? ProcessBuilder.Redirect.INHERIT
                        : ProcessBuilder.Redirect.DISCARD).start();
                LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
                Process h = host;
                Thread.ofPlatform().daemon().start(() -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(h.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String l; (l = r.readLine()) != null; ) {
                            lines.add(l);
                        }
                    } catch (IOException ignored) {
                        // killed
                    }
                    lines.add("{\"event\":\"end\"}");
                });
                // Recovery first: its decisions, until READY.
                while (true) {
                    String l = lines.poll(120, TimeUnit.SECONDS);
                    if (l == null) {
                        throw new IOException("host " + k + " said nothing for 120 s");
                    }
                    Map<String, String> f = fields(l);
                    String ev = f.get("event");
                    if (ev.equals("ready") || ev.equals("end")) {
                        break;
                    }
                    if (ev.equals("unreadable")) {
                        unreadable++;
                        System.err.println("unreadable store: " + f.get("detail"));
                        continue;
                    }
                    if (ev.equals("decision")) {
                        reasons.merge(f.get("reason"), 1, Integer::sum);
                        switch (f.get("outcome")) {
                            case "resumed" -> resumed++;
                            case "reported" -> {
                                reported++;
                                reportedRuns.add(f.get("run_id"));
                                try {
                                    client.abandon(operator, f.get("run_id")); // the operator's command
                                    abandoned++;
                                } catch (IOException e) {
                                    System.err.println("abandon " + f.get("run_id") + ": " + e.getMessage());
                                }
                            }
                            case "refused" -> refused++;
                            default -> { }
                        }
                    }
                }
                if (finish) {
                    if (!host.waitFor(300, TimeUnit.SECONDS)) {
                        throw new IOException("the finishing host did not end");
                    }
                    break;
                }
                // A random point of its work (the kill point is the subject of the soak).
                Thread.sleep(random.nextInt(maxDelayMs + 1));
                host.destroyForcibly();
                host.waitFor(30, TimeUnit.SECONDS);
                if (k % 20 == 0) {
                    System.err.printf("%d kills, %d resumed, %d reported, %.0f s%n", k, resumed, reported,
                            (System.nanoTime() - t0) / 1e9);
                }
            }
            // The checks.
            List<String> ledgerLines = Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
            Set<String> seen = new HashSet<>();
            int twice = 0;
            for (String l : ledgerLines) {
                if (!seen.add(l)) {
                    twice++;
                    System.err.println("effect twice: " + l);
                }
            }
            int suspendedLeft = 0;
            int activeUnreported = 0;
            int completed = 0;
            int cancelled = 0;
            int runs = 0;
            for (RunView v : client.runs()) {
                if (!v.runId().startsWith(prefix + "-")) {
                    continue;
                }
                runs++;
                switch (v.phase()) {
                    case SUSPENDED -> {
                        suspendedLeft++;
                        System.err.println("stranded SUSPENDED: " + v.runId());
                    }
                    case ACTIVE, IMPORTING -> {
                        if (!reportedRuns.contains(v.runId())) {
                            activeUnreported++;
                            System.err.println("stranded " + v.phase() + ", never reported: " + v.runId());
                        }
                    }
                    case COMPLETED -> completed++;
                    case CANCELLED -> cancelled++;
                    default -> { }
                }
            }
            System.out.printf("HostStoreSoak: %d kills in %.0f s (seed %d, kill within %d ms of a host's start)%n", kills,
                    (System.nanoTime() - t0) / 1e9, seed, maxDelayMs);
            System.out.printf("  runs at the helper %d: completed %d, cancelled (abandoned after a report) %d%n", runs,
                    completed, cancelled);
            System.out.printf("  resumed %d, reported %d (abandoned %d), decisions by reason %s%n", resumed, reported,
                    abandoned, reasons);
            System.out.printf("  tool side effects executed twice: %d (ledger lines %d)%n", twice, ledgerLines.size());
            System.out.printf("  envelopes lost / runs stranded SUSPENDED: %d%n", suspendedLeft);
            System.out.printf("  runs stranded ACTIVE and never reported: %d%n", activeUnreported);
            System.out.printf("  unreadable stores: %d, refused restores: %d%n", unreadable, refused);
            boolean ok = twice == 0 && suspendedLeft == 0 && activeUnreported == 0 && unreadable == 0 && refused == 0;
            System.out.println(ok ? "  OK" : "  FAILED");
            client.closeSession(operator);
            if (!ok) {
                System.exit(1);
            }
        } finally {
            helper.destroy();
            helper.waitFor(20, TimeUnit.SECONDS);
            try (var w = Files.walk(dir)) {
                for (Path p : w.sorted(Collections.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static Map<String, String> fields(String line) {
        Map<String, String> m = new HashMap<>();
        Matcher x = FIELD.matcher(line);
        while (x.find()) {
            m.put(x.group(1), x.group(2));
        }
        return m;
    }
}
