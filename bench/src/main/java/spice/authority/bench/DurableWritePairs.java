package spice.authority.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;
import spice.authority.core.ActiveRun;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Paired harness for the durable-write targets (fsync-dominated, so JMH runs that measure one
 * variant after the other on a shared machine drift): each round runs, in rotating order,
 * (a) the bare durable write of a record-sized file ({@link BareDurableWrite}), (b) the SPI's atomic
 * write of the same bytes, and (c) one run-authority transition (alternately sign SUSPENDED and
 * local resume on one run: one re-validation and one atomic record write each). Prints medians,
 * p90 and the ratios b/a (target 1.2) and c/a (target 1.3).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar \
 *     spice.authority.bench.DurableWritePairs [rounds] [parent-dir]</pre>
 */
public final class DurableWritePairs {
    private DurableWritePairs() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        Path parent = Path.of(args.length > 1 ? args[1] : System.getProperty("java.io.tmpdir"));
        Path root = Files.createTempDirectory(parent, "spice-pairs-");
        try {
            run(rounds, root);
        } finally {
            try (Stream<Path> walk = Files.walk(root)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static void run(int rounds, Path root) throws Exception {
        var provider = SecureDirectories.provider();
        byte[] record = new byte[420];
        new SecureRandom().nextBytes(record);
        try (SecureDirectory bareDir = provider.open(root.resolve("bare").toString(), OpenMode.CREATE_OR_VALIDATE);
             SecureDirectory atomicDir = provider.open(root.resolve("atomic").toString(), OpenMode.CREATE_OR_VALIDATE);
             BareDurableWrite bareWrite = new BareDurableWrite(bareDir);
             RunAuthority authority = RunAuthority.open(
                     provider.open(root.resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE), new SecureRandom())) {
            String payload = "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"pairs\",\"definition\":{\"name\":\"test\","
                    + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                    + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                    + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":\"generation-1\","
                    + "\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},\"seen_interaction_ids\":[],"
                    + "\"last_sequence\":7,\"status\":\"suspended\"}";
            Snapshot suspended = Snapshot.decode(payload.getBytes(StandardCharsets.UTF_8));
            ActiveRun run = authority.start(new spice.authority.snapshot.RunId("pairs"), Cancellation.none());
            long[] bare = new long[rounds];
            long[] atomic = new long[rounds];
            long[] transition = new long[rounds];
            boolean suspend = true;
            int warmup = Math.min(50, rounds / 5);
            for (int i = -warmup; i < rounds; i++) {
                for (int k = 0; k < 3; k++) {
                    int which = (i + k + warmup) % 3;
                    long t0 = System.nanoTime();
                    switch (which) {
                        case 0 -> bareWrite.write("bench.state", record);
                        case 1 -> atomicDir.writeAtomically("bench.state", record);
                        default -> {
                            if (suspend) {
                                run.seal(suspended, Cancellation.none());
                            } else {
                                run.resume(Cancellation.none());
                            }
                            suspend = !suspend;
                        }
                    }
                    long dt = System.nanoTime() - t0;
                    if (i >= 0) {
                        (which == 0 ? bare : which == 1 ? atomic : transition)[i] = dt;
                    }
                }
            }
            run.close();
            double b = median(bare);
            double a = median(atomic);
            double t = median(transition);
            System.out.printf("rounds %d (after %d warm-up), directory %s%n", rounds, warmup, root);
            double mb = mean(bare);
            double ma = mean(atomic);
            double mt = mean(transition);
            System.out.printf("bare durable write    median %8.1f us  mean %8.1f us  p90 %8.1f us%n", b / 1e3, mb / 1e3, p90(bare) / 1e3);
            System.out.printf("SPI atomic write      median %8.1f us  mean %8.1f us  p90 %8.1f us  ratio median %.2f mean %.2f (target <= 1.2)%n",
                    a / 1e3, ma / 1e3, p90(atomic) / 1e3, a / b, ma / mb);
            System.out.printf("authority transition  median %8.1f us  mean %8.1f us  p90 %8.1f us  ratio median %.2f mean %.2f (target <= 1.3)%n",
                    t / 1e3, mt / 1e3, p90(transition) / 1e3, t / b, mt / mb);
        }
    }

    private static double median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }

    private static double mean(long[] v) {
        double sum = 0;
        for (long x : v) {
            sum += x;
        }
        return sum / v.length;
    }

    private static double p90(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[(int) Math.min(s.length - 1, Math.round(s.length * 0.9))];
    }
}
