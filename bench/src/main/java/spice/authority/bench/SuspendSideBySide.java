package spice.authority.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;

/**
 * Issue 15's side-by-side, in one run, on the 50-message payload ({@link SnapshotPayloads#fiftyMessages}):
 * <ol>
 *   <li>a bare durable write of the payload's bytes ({@link BareDurableWrite}: write, fsync, rename,
 *       fsync of the directory);</li>
 *   <li>a SQLite put of the same bytes in WAL mode with {@code synchronous=FULL} ({@link SqliteSaver});</li>
 *   <li>the helper's durable suspend: {@code POST /v1/runs/{id}/snapshots} of the SUSPENDED payload
 *       on an ACTIVE run, over one kept-alive Unix-socket connection, against a freshly started
 *       app-image: the median of its first {@code --cold} signs ("cold"), then, after
 *       {@code --warmup} more, the median of {@code --warm} signs ("warm").</li>
 * </ol>
 * Each sign is preceded by the run's start and followed by the lease's release (neither timed),
 * so the helper has answered 3 requests per sign plus the session's. The bare write and the SQLite
 * put are measured before the helper starts and again after it stops ({@code --reps} each, after
 * 50 unmeasured); their medians are over both samples. Everything lives under one temporary
 * directory on {@code --base} (default {@code java.io.tmpdir}), removed at the end.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar \
 *     spice.authority.bench.SuspendSideBySide [--cold 300] [--warmup 1000] [--warm 300] [--reps 300] \
 *     [--base DIR] [--helper-env NAME=VALUE]... src/app/target/app-image/spice-authority
 * </pre>
 * {@code --helper-env JAVA_TOOL_OPTIONS=-XX:StartFlightRecording=...} records the helper.
 * Targets (issue 15): cold median within 1.0x the SQLite put and within 2x the bare write.
 */
public final class SuspendSideBySide {
    private SuspendSideBySide() {}

    /** With {@code --jcmd-out DIR}: the helper's JIT state (Compiler.memory, Compiler.codelist) is saved there at the end. */
    private static Path jcmdOut;

    public static void main(String[] args) throws Exception {
        int cold = 300;
        int warmup = 1000;
        int warm = 300;
        int reps = 300;
        Path base = Path.of(System.getProperty("java.io.tmpdir"));
        Map<String, String> env = new HashMap<>();
        Path image = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--jcmd-out" -> jcmdOut = Path.of(args[++i]);
                case "--cold" -> cold = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--warm" -> warm = Integer.parseInt(args[++i]);
                case "--reps" -> reps = Integer.parseInt(args[++i]);
                case "--base" -> base = Path.of(args[++i]);
                case "--helper-env" -> {
                    String kv = args[++i];
                    env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
                }
                default -> image = Path.of(args[i]);
            }
        }
        if (image == null) {
            System.err.println("usage: SuspendSideBySide [--cold N] [--warmup N] [--warm N] [--reps N] [--base DIR] "
                    + "[--helper-env NAME=VALUE]... APP_IMAGE_DIR");
            System.exit(2);
        }
        Path root = Files.createTempDirectory(base, "spice-side-");
        try {
            run(image.toAbsolutePath(), root, env, cold, warmup, warm, reps);
        } finally {
            deleteTree(root);
        }
    }

    private static void run(Path image, Path root, Map<String, String> env, int cold, int warmup, int warm, int reps)
            throws Exception {
        int total = cold + warmup + warm;
        List<String> ids = new ArrayList<>(total);
        List<byte[]> payloads = new ArrayList<>(total);
        for (int i = 0; i < total; i++) {
            String id = String.format(Locale.ROOT, "side-%06d", i);
            ids.add(id);
            payloads.add(SnapshotPayloads.fiftyMessages(id));
        }
        byte[] same = payloads.get(0);
        System.out.printf(Locale.ROOT, "machine: %d cpus, %s%n", Runtime.getRuntime().availableProcessors(), loadAverage());
        System.out.printf(Locale.ROOT, "payload: %,d bytes (50 messages, 10 tool rounds), SUSPENDED%n", same.length);

        List<Long> bare = new ArrayList<>();
        List<Long> sqlite = new ArrayList<>();
        String sqliteMode;
        try (SecureDirectory dir = SecureDirectories.provider().open(root.resolve("bare").toString(), OpenMode.CREATE_OR_VALIDATE);
             BareDurableWrite w = new BareDurableWrite(dir);
             SqliteSaver db = new SqliteSaver(root.resolve("checkpoints.db"))) {
            sqliteMode = db.mode();
            measureBaselines(w, db, same, reps, bare, sqlite);

            long[] signs = new long[total];
            long[] starts = new long[total];
            long[] releases = new long[total];
            long rssAfterFirst;
            long rssEnd;
            long startMillis;
            Path ep = Files.createDirectory(root.resolve("ep"),
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
            long t0 = System.nanoTime();
            try (HelperProcess helper = new HelperProcess(image, root.resolve("authority"), ep.resolve("s.sock"),
                    root.resolve("helper.log"), env);
                 BenchHost host = new BenchHost(helper.socket)) {
                startMillis = (System.nanoTime() - t0) / 1_000_000;
                rssAfterFirst = helper.rssKib();
                long[] phaseAt = new long[4];
                phaseAt[0] = System.currentTimeMillis();
                Map<String, Long> ticks0 = helper.threadTicks();
                Map<String, Long> ticks1 = ticks0;
                Map<String, Long> ticks2 = ticks0;
                for (int i = 0; i < total; i++) {
                    if (i == cold) {
                        phaseAt[1] = System.currentTimeMillis();
                        ticks1 = helper.threadTicks();
                    }
                    if (i == cold + warmup) {
                        phaseAt[2] = System.currentTimeMillis();
                        ticks2 = helper.threadTicks();
                    }
                    String id = ids.get(i);
                    long s0 = System.nanoTime();
                    host.start(id);
                    long a = System.nanoTime();
                    host.sign(id, payloads.get(i));
                    long b = System.nanoTime();
                    host.release(id);
                    starts[i] = a - s0;
                    signs[i] = b - a;
                    releases[i] = System.nanoTime() - b;
                }
                rssEnd = helper.rssKib();
                if (jcmdOut != null) {
                    Files.createDirectories(jcmdOut);
                    for (String c : List.of("Compiler.memory", "Compiler.codelist", "Compiler.CodeHeap_Analytics")) {
                        new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(helper.pid()), c)
                                .redirectErrorStream(true).redirectOutput(jcmdOut.resolve(c + ".txt").toFile()).start().waitFor();
                    }
                }
                phaseAt[3] = System.currentTimeMillis();
                Map<String, Long> ticks3 = helper.threadTicks();
                System.out.printf(Locale.ROOT, "helper CPU, cold window (%d ms):%n  %s%n", phaseAt[1] - phaseAt[0], HelperProcess.ticksBetween(ticks0, ticks1));
                System.out.printf(Locale.ROOT, "helper CPU, warm window (%d ms):%n  %s%n", phaseAt[3] - phaseAt[2], HelperProcess.ticksBetween(ticks2, ticks3));
                // For ProfileWindows: the wall-clock windows of the cold and warm signs in a recording.
                System.out.printf(Locale.ROOT, "windows (epoch ms): cold %d-%d warm %d-%d%n", phaseAt[0], phaseAt[1], phaseAt[2], phaseAt[3]);
            }
            measureBaselines(w, db, same, reps, bare, sqlite);

            long[] coldSigns = Arrays.copyOfRange(signs, 0, cold);
            long[] warmSigns = Arrays.copyOfRange(signs, cold + warmup, total);
            double bareMs = median(bare);
            double sqliteMs = median(sqlite);
            double coldMs = median(coldSigns);
            double warmMs = median(warmSigns);
            System.out.printf(Locale.ROOT, "helper:  listening after %d ms; RSS %.1f MiB after the session, %.1f MiB after %d suspends%n",
                    startMillis, rssAfterFirst / 1024.0, rssEnd / 1024.0, total);
            System.out.printf(Locale.ROOT, "sqlite:  %s%n%n", sqliteMode);
            System.out.printf(Locale.ROOT, "%-58s %9s %9s %9s%n", "what (ms)", "median", "p10", "p90");
            row("bare durable write (write, fsync, rename, fsync dir)", bare);
            row("SQLite put (WAL, synchronous=FULL)", sqlite);
            row("helper suspend, cold (signs 1-" + cold + ")", coldSigns);
            for (int k = 50; k < cold; k += 50) {
                row("  of which signs " + (k - 49) + "-" + k, Arrays.copyOfRange(signs, k - 50, k));
            }
            row("helper suspend, warm (signs " + (cold + warmup + 1) + "-" + total + ")", warmSigns);
            row("  (untimed) start, cold / warm: " + String.format(Locale.ROOT, "%.3f / %.3f",
                    median(Arrays.copyOfRange(starts, 0, cold)), median(Arrays.copyOfRange(starts, cold + warmup, total))), new long[] {0});
            row("  (untimed) release, cold / warm: " + String.format(Locale.ROOT, "%.3f / %.3f",
                    median(Arrays.copyOfRange(releases, 0, cold)), median(Arrays.copyOfRange(releases, cold + warmup, total))), new long[] {0});
            System.out.printf(Locale.ROOT, "%nratios: cold/SQLite %.2fx (target <= 1.0x), cold/bare %.2fx (target <= 2x); "
                    + "warm/SQLite %.2fx, warm/bare %.2fx%n", coldMs / sqliteMs, coldMs / bareMs, warmMs / sqliteMs, warmMs / bareMs);
        }
    }

    private static void measureBaselines(BareDurableWrite w, SqliteSaver db, byte[] data, int reps, List<Long> bare,
                                         List<Long> sqlite) throws Exception {
        for (int i = 0; i < 50; i++) {
            w.write("payload.json", data);
            db.put("warm-up", data);
        }
        // Interleaved, so a disturbance of the machine falls on both alike.
        for (int i = 0; i < reps; i++) {
            long a = System.nanoTime();
            w.write("payload.json", data);
            long b = System.nanoTime();
            db.put("thread-1", data);
            long c = System.nanoTime();
            bare.add(b - a);
            sqlite.add(c - b);
        }
    }

    private static void row(String what, List<Long> nanos) {
        row(what, nanos.stream().mapToLong(Long::longValue).toArray());
    }

    private static void row(String what, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        System.out.printf(Locale.ROOT, "%-58s %9.3f %9.3f %9.3f%n", what, median(s), s[s.length / 10] / 1e6,
                s[s.length * 9 / 10] / 1e6);
    }

    static double median(List<Long> nanos) {
        return median(nanos.stream().mapToLong(Long::longValue).toArray());
    }

    static double median(long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        int n = s.length;
        return (n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0) / 1e6;
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return "load average " + f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "load average unknown";
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
