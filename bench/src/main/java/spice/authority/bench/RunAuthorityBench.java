package spice.authority.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import spice.authority.core.ActiveRun;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The run authority's durable transitions on the real directory: one start → signSuspended →
 * resumeLocal → signTerminal cycle (four durable record writes, each preceded by the directory
 * re-validation) single-threaded and with 8 threads on distinct runs, beside the bare durable
 * write of a record-sized file ({@link BareDurableWrite}: write, fsync, rename, fsync directory).
 *
 * <p>Per-transition cost = cycle time / 4; target: within 1.3x the bare write.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class RunAuthorityBench {
    private Path root;
    private SecureDirectory baselineDir;
    private BareDurableWrite baseline;
    private RunAuthority authority;
    private final AtomicLong runs = new AtomicLong();
    private final byte[] record = new byte[420];
    private String payloadTemplate;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        root = Files.createTempDirectory("spice-bench-authority-");
        authority = RunAuthority.open(SecureDirectories.provider().open(root.resolve("authority").toString(),
                OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
        baselineDir = SecureDirectories.provider().open(root.resolve("baseline").toString(), OpenMode.CREATE_OR_VALIDATE);
        baseline = new BareDurableWrite(baselineDir);
        new SecureRandom().nextBytes(record);
        payloadTemplate = "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"RUN\",\"definition\":{\"name\":\"test\","
                + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":\"generation-1\","
                + "\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},\"seen_interaction_ids\":[],"
                + "\"last_sequence\":7,\"status\":\"STATUS\"}";
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        authority.close();
        baseline.close();
        baselineDir.close();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private Snapshot payload(String runId, String status) throws Exception {
        return Snapshot.decode(payloadTemplate.replace("RUN", runId).replace("STATUS", status).getBytes(StandardCharsets.UTF_8));
    }

    private void cycle() throws Exception {
        String id = "bench-" + runs.incrementAndGet();
        Snapshot suspended = payload(id, "suspended");
        Snapshot completed = payload(id, "completed");
        Cancellation c = Cancellation.none();
        ActiveRun run = authority.start(new spice.authority.snapshot.RunId(id), c);
        run.seal(suspended, c);
        run.resume(c);
        run.seal(completed, c);
    }

    /** Four durable transitions on one run. */
    @Benchmark
    public void cycleSingleThread() throws Exception {
        cycle();
    }

    /** Four durable transitions per call, 8 threads on distinct runs. */
    @Benchmark
    @Threads(8)
    public void cycleEightThreads() throws Exception {
        cycle();
    }

    /** One bare durable write of a record-sized file (the baseline of one transition). */
    @Benchmark
    public void bareDurableWrite() {
        baseline.write("bench.state", record);
    }
}
