package spice.authority.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Process-level truth of the run authority on the real os-posix directory: exclusive ownership
 * across JVMs through {@code flock}, release on SIGKILL, one winner per import race.
 */
class ProcessTruthTest {
    private static final Cancellation NONE = Cancellation.none();
    private Path root;
    private String dir;
    private final List<Process> children = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-it-");
        dir = root.resolve("authority").toString();
    }

    @AfterEach
    void tearDown() throws IOException, InterruptedException {
        for (Process p : children) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static String payload(String runId) {
        return "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"" + runId + "\",\"definition\":{\"name\":\"test\","
                + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":\"generation-1\","
                + "\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},\"seen_interaction_ids\":[],"
                + "\"last_sequence\":7,\"status\":\"suspended\"}";
    }

    private RunAuthority openHere() throws Exception {
        return RunAuthority.open(SecureDirectories.provider().open(dir, OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
    }

    private Process child(String... args) throws IOException {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "--enable-native-access=ALL-UNNAMED",
                "-cp", cp, AuthorityChild.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        children.add(p);
        return p;
    }

    @Test
    void twoProcessesRaceToImportTheSameEnvelope_200Rounds_exactlyOneWinsEachTime() throws Exception {
        int rounds = 200;
        List<Path> envelopes = new ArrayList<>();
        try (RunAuthority a = openHere()) {
            for (int i = 0; i < rounds; i++) {
                String run = "race-" + i;
                ActiveRun r = a.start(new RunId(run), NONE);
                Envelope e = r.seal(Snapshot.decode(payload(run).getBytes(StandardCharsets.UTF_8)), NONE).envelope();
                r.close();
                Path f = root.resolve(run + ".pb");
                Files.write(f, e.toBinary());
                envelopes.add(f);
            }
        }
        Process p1 = child("race", dir);
        Process p2 = child("race", dir);
        PrintWriter in1 = new PrintWriter(p1.getOutputStream(), true, StandardCharsets.UTF_8);
        PrintWriter in2 = new PrintWriter(p2.getOutputStream(), true, StandardCharsets.UTF_8);
        BufferedReader out1 = new BufferedReader(new InputStreamReader(p1.getInputStream(), StandardCharsets.UTF_8));
        BufferedReader out2 = new BufferedReader(new InputStreamReader(p2.getInputStream(), StandardCharsets.UTF_8));
        List<String> failures = new ArrayList<>();
        int wins1 = 0;
        for (int i = 0; i < rounds; i++) {
            in1.println("go " + envelopes.get(i));
            in2.println("go " + envelopes.get(i));
            String r1 = out1.readLine();
            String r2 = out2.readLine();
            int winners = (r1.equals("WON") ? 1 : 0) + (r2.equals("WON") ? 1 : 0);
            if (winners != 1) {
                failures.add("round " + i + ": " + r1 + " / " + r2);
            }
            for (String r : List.of(r1, r2)) {
                if (!r.equals("WON") && !r.equals("LOST busy") && !r.equals("LOST verification_failed")) {
                    failures.add("round " + i + ": unexpected " + r);
                }
            }
            wins1 += r1.equals("WON") ? 1 : 0;
        }
        in1.println("quit");
        in2.println("quit");
        assertThat(p1.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p2.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(failures).isEmpty();
        try (RunAuthority a = openHere()) {
            for (int i = 0; i < rounds; i++) {
                assertThat(a.inspect(new RunId("race-" + i)).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
                assertThat(a.inspect(new RunId("race-" + i)).orElseThrow().runGeneration()).isEqualTo(2);
            }
        }
        System.out.println("import race: child 1 won " + wins1 + " of " + rounds + " rounds");
    }

    @Test
    void ownerKilledWithSigkill_releasesTheRun_andAnotherProcessImportsIt_butNotWhileItLives() throws Exception {
        Path payloadFile = root.resolve("payload.json");
        Files.writeString(payloadFile, payload("owned-run"));
        Path envFile = root.resolve("owned.pb");
        Process owner = child("own", dir, "owned-run", payloadFile.toString(), envFile.toString());
        BufferedReader out = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("READY");
        Envelope env = Envelope.parse(Files.readAllBytes(envFile));
        try (RunAuthority a = openHere()) {
            assertThatThrownBy(() -> a.prepareImport(env, NONE)).isInstanceOf(AuthorityException.Busy.class)
                    .hasMessageContaining("owned by a live process");
            assertThatThrownBy(() -> a.start(new RunId("owned-run"), NONE)).isInstanceOf(AuthorityException.Busy.class);
            owner.destroyForcibly(); // SIGKILL
            assertThat(owner.waitFor(10, TimeUnit.SECONDS)).isTrue();
            RunImport imp = a.prepareImport(env, NONE);
            imp.consume(NONE);
            ActiveRun run = imp.activate(NONE);
            assertThat(run.runGeneration()).isEqualTo(2);
            // A second import of the same envelope is refused (the record moved on).
            assertThatThrownBy(() -> a.prepareImport(env, NONE)).isInstanceOf(AuthorityException.class);
            run.close();
            assertThatThrownBy(() -> a.prepareImport(env, NONE)).isInstanceOf(AuthorityException.Verification.class);
        }
    }

    @Test
    void sixteenThreadsOnRealDirectory_noLostUpdateNoDeadlockNoFdLeak() throws Exception {
        try (RunAuthority a = openHere()) {
            // Warm up classes and lazily opened descriptors before counting.
            a.start(new RunId("warm-up"), NONE).close();
            long fdsBefore = openFds();
            ExecutorService pool = Executors.newFixedThreadPool(16);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int thread = t;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 10; i++) {
                        String id = "t" + thread + "-" + i;
                        ActiveRun r = a.start(new RunId(id), NONE);
                        Envelope e = r.seal(Snapshot.decode(payload(id).getBytes(StandardCharsets.UTF_8)), NONE).envelope();
                        r.close();
                        RunImport imp = a.prepareImport(e, NONE);
                        imp.consume(NONE);
                        ActiveRun again = imp.activate(NONE);
                        again.terminal(RunPhase.COMPLETED, NONE);
                    }
                    return null;
                }));
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 30; i++) {
                        try {
                            a.start(new RunId("shared"), NONE).close();
                        } catch (AuthorityException e) {
                            assertThat(e.code()).isIn("busy", "state_conflict");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(120, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            for (int t = 0; t < 16; t++) {
                for (int i = 0; i < 10; i++) {
                    assertThat(a.inspect(new RunId("t" + t + "-" + i)).orElseThrow().phase()).isEqualTo(RunPhase.COMPLETED);
                }
            }
            // A thousand failing operations leave the descriptor table as it was.
            for (int i = 0; i < 1000; i++) {
                try {
                    a.start(new RunId("shared"), NONE);
                } catch (AuthorityException expected) {
                    // state: the record exists
                }
            }
            assertThat(openFds()).isEqualTo(fdsBefore);
            assertThat(a.outstandingLeases()).isZero();
            a.close(Duration.ofSeconds(5));
        }
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
