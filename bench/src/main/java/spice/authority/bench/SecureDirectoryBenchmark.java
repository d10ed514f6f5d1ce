package spice.authority.bench;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;

/**
 * The authority directory on POSIX (issue 3):
 * <ul>
 *   <li>{@code openValidate8Deep}: bind and close a directory eight components below {@code /}
 *       (validate only: the walk, the ancestry checks and the leaf checks);</li>
 *   <li>{@code revalidate8Deep}: the re-validation run before every durable transition;</li>
 *   <li>{@code atomicWrite1KiB} against {@code bareWrite1KiB}: one durable 1 KiB record through
 *       {@link SecureDirectory#writeAtomically} and the same write, fsync, rename and directory
 *       fsync without the checks ({@link BareDurableWrite}, through {@code java.nio}). Target:
 *       atomic within 1.2x bare.</li>
 * </ul>
 * The directory lives under {@code -Dspice.bench.dir} (default {@code java.io.tmpdir}); run it
 * on the file system you care about, since fsync dominates the write figures.
 * <pre>java -jar bench/target/benchmarks.jar SecureDirectory</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class SecureDirectoryBenchmark {

    private static final String RECORD = "run-" + "5a".repeat(32) + ".state";
    private static final String BARE = "run-" + "ba".repeat(32) + ".state";

    private final byte[] record = new byte[1024];
    private SecureDirectoryProvider provider;
    private Path root;
    private String deep;
    private SecureDirectory directory;
    private BareDurableWrite bare;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        provider = SecureDirectories.provider();
        Path parent = Path.of(System.getProperty("spice.bench.dir", System.getProperty("java.io.tmpdir")));
        root = Files.createTempDirectory(parent, "spice-bench-");
        // eight components below "/" in total (for /tmp: /tmp/spice-bench-N/a/b/c/d/e/auth)
        Path leaf = root;
        for (int level = root.getNameCount(); level < 7; level++) {
            leaf = leaf.resolve(String.valueOf((char) ('a' + level)));
        }
        deep = leaf.resolve("auth").toString();
        directory = provider.open(deep, OpenMode.CREATE_OR_VALIDATE);
        bare = new BareDurableWrite(directory);
        for (int i = 0; i < record.length; i++) {
            record[i] = (byte) ('a' + i % 26);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        bare.close();
        directory.close();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    @Benchmark
    public Object openValidate8Deep() throws Exception {
        try (SecureDirectory d = provider.open(deep, OpenMode.VALIDATE_ONLY)) {
            return d.identity();
        }
    }

    @Benchmark
    public void revalidate8Deep() throws Exception {
        directory.revalidate();
    }

    @Benchmark
    public void atomicWrite1KiB() throws Exception {
        directory.writeAtomically(RECORD, record);
    }

    @Benchmark
    public void bareWrite1KiB() {
        bare.write(BARE, record);
    }
}
