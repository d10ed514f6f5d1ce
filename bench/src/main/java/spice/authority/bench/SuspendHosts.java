package spice.authority.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 15's concurrency figure: aggregate durable suspends per second with 1, 8 and 32 concurrent
 * hosts on distinct runs, against one app-image helper. Each host is a thread with its own
 * kept-alive connection and its own session; it loops over its own runs: start (durable ACTIVE),
 * sign the SUSPENDED 50-message payload (durable SUSPENDED), release the lease. A suspend is
 * counted when its sign is answered; every cycle is two durable transitions.
 *
 * <p>One helper serves all levels: it is warmed first ({@code --warmup} suspends of one host),
 * then each level runs for {@code --seconds}. All hosts live in this one process, so the helper is
 * started with {@code SPICE_AUTHORITY_MAX_SESSIONS_PER_PROCESS} raised to the largest level (the
 * default quota is 8 sessions per process; connections per process stay at their default, 32).
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar \
 *     spice.authority.bench.SuspendHosts [--hosts 1,8,32] [--seconds 10] [--warmup 1000] [--base DIR] \
 *     [--helper-env NAME=VALUE]... src/app/target/app-image/spice-authority
 * </pre>
 * Target (issue 15): 32 hosts at least 6x the suspends per second of one host. Each level also prints
 * the CPU the helper and this process (the hosts) used per wall-clock second, so a level that is
 * bound by the machine's cores shows as their sum reaching the number of CPUs.
 */
public final class SuspendHosts {
    private SuspendHosts() {}

    /** Run IDs are this long, so one payload is patched in place per run (canonical bytes stay canonical). */
    private static final String MARK = "h00-0000000";

    public static void main(String[] args) throws Exception {
        int[] levels = {1, 8, 32};
        int seconds = 10;
        int warmup = 1000;
        Path base = Path.of(System.getProperty("java.io.tmpdir"));
        Map<String, String> env = new HashMap<>();
        Path image = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--hosts" -> levels = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--base" -> base = Path.of(args[++i]);
                case "--helper-env" -> {
                    String kv = args[++i];
                    env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
                }
                default -> image = Path.of(args[i]);
            }
        }
        if (image == null) {
            System.err.println("usage: SuspendHosts [--hosts 1,8,32] [--seconds N] [--warmup N] [--base DIR] [--helper-env NAME=VALUE]... APP_IMAGE_DIR");
            System.exit(2);
        }
        int most = Arrays.stream(levels).max().orElse(1);
        env.putIfAbsent("SPICE_AUTHORITY_MAX_SESSIONS_PER_PROCESS", Integer.toString(Math.max(8, most)));
        byte[] template = SnapshotPayloads.fiftyMessages(MARK);
        int at = indexOf(template, ("\"run_id\":\"" + MARK + "\"").getBytes(StandardCharsets.US_ASCII)) + 10;
        Path root = Files.createTempDirectory(base, "spice-hosts-");
        try {
            Path ep = Files.createDirectory(root.resolve("ep"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            System.out.printf(Locale.ROOT, "machine: %d cpus, %s; payload %,d bytes%n", Runtime.getRuntime().availableProcessors(),
                    SuspendSideBySide.loadAverage(), template.length);
            try (HelperProcess helper = new HelperProcess(image.toAbsolutePath(), root.resolve("authority"), ep.resolve("s.sock"),
                    root.resolve("helper.log"), env)) {
                try (BenchHost h = new BenchHost(helper.socket)) {
                    for (int i = 0; i < warmup; i++) {
                        String id = runId(99, i);
                        h.start(id);
                        h.sign(id, payload(template, at, id));
                        h.release(id);
                    }
                }
                double one = 0;
                System.out.printf(Locale.ROOT, "%6s %12s %14s %12s %10s %14s %14s%n", "hosts", "suspends", "suspends/s", "median ms",
                        "vs 1 host", "helper CPU/s", "hosts CPU/s");
                for (int level : levels) {
                    long helperBefore = total(helper.threadTicks());
                    long hostsBefore = ownCpuNanos();
                    long wallBefore = System.nanoTime();
                    Result r = level(helper.socket, level, seconds, template, at);
                    double wall = (System.nanoTime() - wallBefore) / 1e9;
                    // CPU seconds per wall second (2.00 = both cores of this machine), of the helper
                    // and of this process (the hosts' threads): where the machine's cores went.
                    double helperCpu = (total(helper.threadTicks()) - helperBefore) / 100.0 / wall;
                    double hostsCpu = (ownCpuNanos() - hostsBefore) / 1e9 / wall;
                    if (level == 1) {
                        one = r.perSecond;
                    }
                    System.out.printf(Locale.ROOT, "%6d %12d %14.1f %12.3f %10s %14.2f %14.2f%n", level, r.count, r.perSecond, r.medianMs,
                            one > 0 ? String.format(Locale.ROOT, "%.2fx", r.perSecond / one) : "-", helperCpu, hostsCpu);
                }
                System.out.printf(Locale.ROOT, "helper RSS at the end: %.1f MiB%n", helper.rssKib() / 1024.0);
            }
        } finally {
            SuspendSideBySide.deleteTree(root);
        }
    }

    private record Result(long count, double perSecond, double medianMs) {}

    private static long total(Map<String, Long> ticks) {
        return ticks.values().stream().mapToLong(Long::longValue).sum();
    }

    /** CPU time of this process (all its threads), in nanoseconds. */
    private static long ownCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static Result level(Path socket, int hosts, int seconds, byte[] template, int at) throws Exception {
        CyclicBarrier ready = new CyclicBarrier(hosts + 1);
        long[] counts = new long[hosts];
        List<List<Long>> times = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] deadline = new long[1];
        List<Thread> threads = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            int host = h;
            List<Long> mine = new ArrayList<>();
            times.add(mine);
            threads.add(Thread.ofPlatform().name("host-" + h).start(() -> {
                try (BenchHost b = new BenchHost(socket)) {
                    ready.await();
                    ready.await(); // deadline set
                    for (int i = 0; System.nanoTime() < deadline[0]; i++) {
                        String id = runId(host, hosts * 1_000_000 + i);
                        b.start(id);
                        long t = System.nanoTime();
                        b.sign(id, payload(template, at, id));
                        long done = System.nanoTime();
                        b.release(id);
                        if (done <= deadline[0]) {
                            counts[host]++;
                            mine.add(done - t);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    ready.reset();
                }
            }));
        }
        ready.await(); // every host has its session
        deadline[0] = System.nanoTime() + seconds * 1_000_000_000L;
        ready.await();
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a host failed", failure.get());
        }
        long total = Arrays.stream(counts).sum();
        List<Long> all = new ArrayList<>();
        times.forEach(all::addAll);
        return new Result(total, total / (double) seconds, SuspendSideBySide.median(all));
    }

    /** {@code hNN-NNNNNNN}: as long as {@link #MARK}. */
    private static String runId(int host, int i) {
        return String.format(Locale.ROOT, "h%02d-%07d", host, i % 10_000_000);
    }

    private static byte[] payload(byte[] template, int at, String runId) {
        byte[] p = template.clone();
        byte[] id = runId.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(id, 0, p, at, id.length);
        return p;
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new IllegalStateException("run ID not found in the payload");
    }
}
