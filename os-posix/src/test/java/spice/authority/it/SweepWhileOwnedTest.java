package spice.authority.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.RunId;

/**
 * The sweep at open never removes a temporary file that another process may still be writing: a
 * record's temporary is removed only while its run's lock can be taken. A live owner in another
 * JVM (real {@code flock}) keeps it; once that owner is killed, the next open removes it.
 */
@EnabledOnOs(OS.LINUX)
class SweepWhileOwnedTest {
    private Path root;
    private String dir;
    private final List<Process> children = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-it-sweep-");
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
    void temporaryOfARunOwnedByALiveProcess_isKept_andRemovedOnceTheOwnerIsDead() throws Exception {
        Path payload = root.resolve("payload.json");
        Files.writeString(payload, "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"owned\",\"definition\":{\"name\":\"test\","
                + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":\"generation-1\","
                + "\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},\"seen_interaction_ids\":[],"
                + "\"last_sequence\":7,\"status\":\"suspended\"}");
        Process owner = child("own", dir, "owned", payload.toString(), root.resolve("owned.pb").toString());
        BufferedReader out = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("READY");
        // What the owner's next write would look like half-way: its temporary file.
        Path temp = Path.of(dir, "." + RecordCodec.fileStem("owned") + ".state.0123456789abcdef01234567.tmp");
        Files.write(temp, new byte[] {1, 2, 3});

        try (RunAuthority a = openHere()) {
            assertThat(a.sweptTempFiles()).isZero();
            assertThat(temp).exists();
        }

        owner.destroyForcibly(); // SIGKILL: the kernel releases the owner's flock
        assertThat(owner.waitFor(10, TimeUnit.SECONDS)).isTrue();
        try (RunAuthority a = openHere()) {
            assertThat(a.sweptTempFiles()).isEqualTo(1);
            assertThat(temp).doesNotExist();
            assertThat(a.inspect(new RunId("owned"))).isPresent();
        }
    }
}
