package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;
import spice.authority.snapshot.proto.SnapshotLifecycle;

/**
 * Recovery of runs with real processes (issue 12): the one run-ID rule at every door of the
 * packaged helper.
 */
class RecoveryRunsIT {
    private static final String RULE = "run_id must be a token of at most 96 UTF-8 bytes";

    private Path root;
    private HelperProcess helper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-recovery-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    private String payloadText(String runId, long seq) {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        return base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"last_sequence\":7", "\"last_sequence\":" + seq);
    }

    private Path payload(String runId, long seq) throws IOException {
        Path f = root.resolve("p-" + Integer.toHexString(runId.hashCode()) + "-" + seq + ".json");
        Files.writeString(f, payloadText(runId, seq));
        return f;
    }

    private List<String> authorityFiles() throws IOException {
        try (var s = Files.list(root.resolve("authority"))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /**
     * A structurally valid envelope (right digest, well-shaped claim) for a payload under
     * {@code runId}; its claim is made up, so only the structure speaks for it.
     */
    private Path envelopeFor(String runId) throws IOException {
        byte[] payload = payloadText(runId, 7).getBytes(StandardCharsets.UTF_8);
        byte[] filler = new byte[32];
        java.util.Arrays.fill(filler, (byte) 0x5A);
        byte[] env = SnapshotEnvelope.newBuilder()
                .setFormat("spice.agent.snapshot/v1alpha2").setRunId(runId).setLastSequence(7)
                .setLifecycle(SnapshotLifecycle.SNAPSHOT_LIFECYCLE_SUSPENDED)
                .setPayload(ByteString.copyFrom(payload)).setSha256(ByteString.copyFrom(HmacSha256.sha256(payload)))
                .setAuthority(SnapshotAuthority.newBuilder().setScopeId(ByteString.copyFrom(filler)).setGeneration(1)
                        .setHmacSha256(ByteString.copyFrom(filler)))
                .build().toByteArray();
        Path f = root.resolve("e-" + runId.length() + ".pb");
        Files.write(f, env);
        return f;
    }

    @Test
    void runIdRule_96BytesStartsAndSuspends_97RefusedAtStartPayloadImportAndPath_withNothingCreated() throws Exception {
        String id96 = "r".repeat(96);
        String id97 = "r".repeat(97);
        try (HostProcess host = new HostProcess(helper.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            assertThat(host.send("start " + id96)).startsWith("200 ").contains("\"run_id\":\"" + id96 + "\"");
            assertThat(host.send("sign " + id96 + " " + payload(id96, 7) + " " + root.resolve("e96.pb"))).startsWith("200 envelope");
            List<String> before = authorityFiles();

            // Start: 400 naming the rule (today's helper took 97..128 bytes, which could never be suspended).
            assertThat(host.send("start " + id97)).startsWith("400 ").contains("\"code\":\"invalid_request\"").contains(RULE);
            assertThat(host.send("start " + "\\u20ac".repeat(33))).startsWith("400 ").contains(RULE);
            // A payload: P-RUNID, with the same rule text.
            assertThat(host.send("sign " + id97 + " " + payload(id97, 7) + " " + root.resolve("never.pb"))).startsWith("422 ")
                    .contains("\"rule\":\"P-RUNID\"").contains(RULE);
            // An envelope under a 97-byte ID: refused before any owner or lock is looked at.
            assertThat(host.send("import " + envelopeFor(id97))).startsWith("400 ").contains("\"code\":\"invalid_request\"")
                    .contains(RULE);
            // Paths.
            assertThat(host.send("abandon " + id97)).startsWith("400 ").contains(RULE);
            assertThat(host.send("resume " + id97)).startsWith("400 ").contains(RULE);
            UnixHttp.Response get = helper.http().get("/v1/runs/" + id97);
            assertThat(get.status()).isEqualTo(400);
            assertThat(get.text()).contains(RULE);

            assertThat(authorityFiles()).as("nothing created for a refused run ID").isEqualTo(before);
            assertThat(Files.exists(root.resolve("never.pb"))).isFalse();
            assertThat(helper.http().get("/v1/runs/" + id96).text()).contains("\"phase\":\"SUSPENDED\"");
        }
    }
}
