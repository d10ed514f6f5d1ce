package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperProblem;
import spice.authority.host.ImportView;
import spice.authority.host.RetryPolicy;
import spice.authority.host.RunView;
import spice.authority.host.Session;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.contract.RunPhase;

/** The packaged helper driven through {@link AuthorityClient} across a run's whole life cycle. */
class AuthorityClientIT {
    private Path root;
    private HelperProcess helper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-client-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        // The default socket of a user whose XDG_RUNTIME_DIR is root/xdg.
        Files.createDirectory(root.resolve("xdg"), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("xdg/spice-agent/authority.sock"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    private static byte[] payload(String runId, String status, long seq) throws IOException {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        return base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"status\":\"suspended\"", "\"status\":\"" + status + "\"")
                .replace("\"last_sequence\":7", "\"last_sequence\":" + seq)
                .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void lifecycle_startSignResumeSignRelease_importElsewhere_abandon() throws Exception {
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(helper.socket)).retry(RetryPolicy.DEFAULT).build();
        Session first = client.openSession();
        Session second = client.openSession();
        assertThat(first.pid()).isEqualTo(ProcessHandle.current().pid());

        assertThat(client.start(first, "run-c")).isEqualTo(new RunView("run-c", RunPhase.ACTIVE, 1, true, false));
        byte[] env1 = client.sign(first, "run-c", payload("run-c", "suspended", 7));
        assertThat(client.run("run-c")).isEqualTo(new RunView("run-c", RunPhase.SUSPENDED, 1, true, false));
        assertThat(client.inspect(env1).text()).contains("SNAPSHOT_LIFECYCLE_SUSPENDED");

        assertThat(client.resume(first, "run-c")).isEqualTo(new RunView("run-c", RunPhase.ACTIVE, 2, true, false));
        byte[] payload2 = payload("run-c", "suspended", 9);
        byte[] env2 = client.sign(first, "run-c", payload2);
        // A lost answer is never fatal: the identical payload gives the identical envelope, to any session.
        assertThat(client.sign(second, "run-c", payload2)).isEqualTo(env2);
        assertThatThrownBy(() -> client.resume(second, "run-c")).isInstanceOf(HelperProblem.StateConflict.class);
        client.release(first, "run-c");

        // The first envelope was superseded by the local resume: it never imports again.
        assertThatThrownBy(() -> client.prepareImport(second, env1)).isInstanceOf(HelperProblem.VerificationFailed.class);
        ImportView tx = client.prepareImport(second, env2);
        assertThat(tx.runId()).isEqualTo("run-c");
        assertThat(tx.lastSequence()).isEqualTo(9);
        assertThat(tx.nextSequence()).isEqualTo(10);
        assertThat(client.consume(second, tx).phase()).isEqualTo(RunPhase.IMPORTING);
        assertThat(client.activate(second, tx)).isEqualTo(new RunView("run-c", RunPhase.ACTIVE, 3, true, false));
        assertThat(client.authority().ownedRuns()).isEqualTo(1);

        // Abandon is for orphans: refused while the second session owns the run, done once it is closed.
        assertThatThrownBy(() -> client.abandon(first, "run-c")).isInstanceOf(HelperProblem.Busy.class);
        client.closeSession(second);
        assertThat(client.abandon(first, "run-c")).isEqualTo(new RunView("run-c", RunPhase.CANCELLED, 3, false, false));
        assertThat(client.runs()).containsExactly(new RunView("run-c", RunPhase.CANCELLED, 3, false, false));
        client.closeSession(first);
        assertThatThrownBy(() -> client.start(first, "run-d")).isInstanceOf(HelperProblem.class);
    }

    @Test
    void readmeExample_runsAsWritten_onTheDefaultSocket() throws Exception {
        Path repo = Path.of("../..").toAbsolutePath().normalize();
        String readme = Files.readString(repo.resolve("README.md"));
        int begin = readme.indexOf("<!-- host-example:begin -->");
        int end = readme.indexOf("<!-- host-example:end -->");
        assertThat(begin).isPositive();
        assertThat(end).isGreaterThan(begin);
        String block = readme.substring(begin, end);
        Path source = root.resolve("HostExample.java");
        Files.writeString(source, block.substring(block.indexOf("```java\n") + 8, block.lastIndexOf("```")));
        Path payload = root.resolve("payload.json");
        Files.write(payload, payload("run-1", "suspended", 7));

        List<String> classpath = new ArrayList<>();
        for (Class<?> c : new Class<?>[] {AuthorityClient.class, RunId.class}) {
            classpath.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--class-path", String.join(java.io.File.pathSeparator, classpath), source.toString(), payload.toString())
                .redirectErrorStream(true);
        pb.environment().put("XDG_RUNTIME_DIR", root.resolve("xdg").toString());
        Process run = pb.start();
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(run.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(out).isZero();
        assertThat(out).isEqualTo("""
                RunView[runId=run-1, phase=ACTIVE, runGeneration=2, owned=true, fenced=false]
                continue at sequence 8
                """);
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(helper.socket)).build();
        // The helper's process watcher releases the exited host's lease asynchronously (milliseconds
        // after the exit): poll with a deadline rather than expect it at once.
        RunView expected = new RunView("run-1", RunPhase.ACTIVE, 2, false, false);
        assertThat(Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(10), () -> client.run("run-1"),
                expected::equals)).isEqualTo(expected);
    }

    @Test
    void readmeEngineExample_runsAsWritten_crashThenRecover() throws Exception {
        Path repo = Path.of("../..").toAbsolutePath().normalize();
        String readme = Files.readString(repo.resolve("README.md"));
        int begin = readme.indexOf("<!-- engine-example:begin -->");
        int end = readme.indexOf("<!-- engine-example:end -->");
        assertThat(begin).isPositive();
        assertThat(end).isGreaterThan(begin);
        String block = readme.substring(begin, end);
        Path source = root.resolve("EngineExample.java");
        Files.writeString(source, block.substring(block.indexOf("```java\n") + 8, block.lastIndexOf("```")));

        List<String> classpath = new ArrayList<>();
        for (Class<?> c : new Class<?>[] {AuthorityClient.class, RunId.class, com.google.protobuf.InvalidProtocolBufferException.class,
                spice.authority.host.store.HostStore.class, org.sqlite.JDBC.class}) {
            classpath.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        String out = "";
        List<Integer> exits = new ArrayList<>();
        for (List<String> mode : List.of(List.of("crash"), List.<String>of())) {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "--class-path", String.join(java.io.File.pathSeparator, classpath),
                    source.toString()));
            cmd.addAll(mode);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("XDG_RUNTIME_DIR", root.resolve("xdg").toString());
            pb.environment().put("XDG_STATE_HOME", root.resolve("state").toString());
            Process run = pb.start();
            out += new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(run.waitFor(120, TimeUnit.SECONDS)).isTrue();
            exits.add(run.exitValue());
        }
        assertThat(exits).as(out).containsExactly(137, 0);
        assertThat(out).isEqualTo("""
                suspended at sequence 9
                suspended_checkpoint clock-run
                completed after 2 turns
                """);
        assertThat(root.resolve("state/spice-authority/hosts/clock-agent.db")).isRegularFile();
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(helper.socket)).build();
        assertThat(client.run("clock-run").phase()).isEqualTo(RunPhase.COMPLETED);
    }
}
