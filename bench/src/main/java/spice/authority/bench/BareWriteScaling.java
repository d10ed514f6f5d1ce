package spice.authority.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * The floor under issue 15's concurrency target, measured on the same disk: what the machine gives
 * when N threads do nothing but the durable writes of a suspend cycle. Each thread loops over its
 * own record names; one cycle is two {@link BareDurableWrite}s of a record-sized file (a suspend
 * cycle of {@link SuspendHosts} makes two durable transitions: start, then sign), with no HTTP, no
 * parsing, no signing and no checks. Prints cycles per second at each level and the ratio to one
 * thread: if the bare writes themselves cannot reach 6x at 32 threads here, no helper that makes
 * the same fsyncs can.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar spice.authority.bench.BareWriteScaling \
 *     [--threads 1,8,32] [--seconds 8] [--bytes 400] [--base DIR]
 * </pre>
 */
public final class BareWriteScaling {
    private BareWriteScaling() {}

    public static void main(String[] args) throws Exception {
        int[] levels = {1, 8, 32};
        int seconds = 8;
        int bytes = 400;
        Path base = Path.of(System.getProperty("java.io.tmpdir"));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--threads" -> levels = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--bytes" -> bytes = Integer.parseInt(args[++i]);
                case "--base" -> base = Path.of(args[++i]);
                default -> {
                    System.err.println("usage: BareWriteScaling [--threads 1,8,32] [--seconds S] [--bytes N] [--base DIR]");
                    System.exit(2);
                }
            }
        }
        Path root = Files.createTempDirectory(base, "spice-barescale-");
        try {
            System.out.printf(Locale.ROOT, "machine: %d cpus; %d-byte records, two durable writes per cycle, %d s per level%n",
                    Runtime.getRuntime().availableProcessors(), bytes, seconds);
            byte[] record = new byte[bytes];
            Arrays.fill(record, (byte) 'r');
            level(root, 1, 2, record); // unmeasured warm-up of the JIT and the file system
            double one = 0;
            System.out.println("threads   cycles/s   x one thread");
            for (int n : levels) {
                double rate = level(root, n, seconds, record);
                if (n == levels[0]) {
                    one = rate;
                }
                System.out.printf(Locale.ROOT, "%7d %10.1f %14.2f%n", n, rate, rate / one);
            }
        } finally {
            try (Stream<Path> walk = Files.walk(root)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Cycles per second of {@code n} threads over {@code seconds}. */
    private static double level(Path root, int n, int seconds, byte[] record) throws Exception {
        LongAdder cycles = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch ready = new CountDownLatch(n);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < n; t++) {
            String prefix = String.format(Locale.ROOT, "t%02d-", t);
            Thread th = new Thread(() -> {
                try (BareDurableWrite w = new BareDurableWrite(root)) {
                    ready.countDown();
                    for (long i = 0; !stop.get(); i++) {
                        String name = prefix + (i % 512) + ".state";
                        w.write(name, record);
                        w.write(name, record);
                        cycles.increment();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "bare-" + t);
            threads.add(th);
            th.start();
        }
        ready.await();
        long t0 = System.nanoTime();
        long c0 = cycles.sum();
        Thread.sleep(seconds * 1000L);
        long c1 = cycles.sum();
        long t1 = System.nanoTime();
        stop.set(true);
        for (Thread th : threads) {
            th.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a writer failed", failures.get(0));
        }
        return (c1 - c0) / ((t1 - t0) / 1e9);
    }
}
