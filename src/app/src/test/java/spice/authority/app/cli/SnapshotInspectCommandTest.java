package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.envelope.Envelope;

class SnapshotInspectCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static byte[] vectorEnvelope(int i) {
        return SpecFiles.hex(SpecFiles.json("vectors/envelope.json").get("cases").get(i).get("envelope_hex").asText());
    }

    @Test
    void inspect_binaryEnvelope_showsFieldsChecksSummaryAndNeverClaimsAuthenticity(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("env.pb");
        Files.write(f, vectorEnvelope(0));
        CliRun r = CliRun.of("snapshot", "inspect", f.toString());
        assertThat(r.exitCode()).isZero();
        JsonNode v = JSON.readTree(r.out());
        assertThat(v.at("/encoding").asText()).isEqualTo("binary protobuf");
        assertThat(v.at("/envelope/run_id").asText()).isEqualTo("run-1");
        assertThat(v.at("/envelope/lifecycle").asText()).isEqualTo("SNAPSHOT_LIFECYCLE_SUSPENDED");
        assertThat(v.at("/checks/structure").asText()).isEqualTo("ok");
        assertThat(v.at("/checks/digest").asText()).startsWith("ok");
        assertThat(v.at("/checks/claim_shape").asText()).startsWith("ok");
        assertThat(v.at("/checks/payload").asText()).isEqualTo("ok: valid canonical v1alpha2");
        assertThat(v.at("/checks/agreement").asText()).startsWith("ok");
        assertThat(v.at("/authenticity").asText()).startsWith("not verified");
        assertThat(v.at("/payload/plan_identity").has("workspace_fingerprint")).isFalse();
        assertThat(v.at("/payload/messages").asInt()).isPositive();
        assertThat(v.at("/payload/resumable").asBoolean()).isTrue();
        // No claim MAC and no conversation text in the view.
        String hmacHex = SpecFiles.json("vectors/envelope.json").get("cases").get(0).get("hmac_sha256_hex").asText();
        assertThat(r.out()).doesNotContain(hmacHex).doesNotContain("List the files.");
    }

    @Test
    void inspect_v1alpha3Envelope_namesItsVersionAndWorkspace(@TempDir Path dir) throws Exception {
        JsonNode c = SpecFiles.json("vectors-v1alpha3/envelope.json").get("cases").get(0);
        Path f = dir.resolve("env3.pb");
        Files.write(f, SpecFiles.hex(c.get("envelope_hex").asText()));
        CliRun r = CliRun.of("snapshot", "inspect", f.toString());
        assertThat(r.exitCode()).isZero();
        JsonNode v = JSON.readTree(r.out());
        assertThat(v.at("/envelope/format").asText()).isEqualTo("spice.agent.snapshot/v1alpha3");
        assertThat(v.at("/checks/structure").asText()).isEqualTo("ok");
        assertThat(v.at("/checks/payload").asText()).isEqualTo("ok: valid canonical v1alpha3");
        assertThat(v.at("/payload/plan_identity/workspace_fingerprint").asText()).startsWith("sha256:");
    }

    @Test
    void inspect_unknownFormat_structureNamesIt_payloadNamesItsVersion(@TempDir Path dir) throws Exception {
        byte[] env = vectorEnvelope(0);
        // "spice.agent.snapshot/v1alpha2" -> "spice.agent.snapshot/v1alpha9" (the format is the first field)
        env[2 + 28] = '9';
        Path f = dir.resolve("unknown-format.pb");
        Files.write(f, env);
        CliRun r = CliRun.of("snapshot", "inspect", f.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        JsonNode v = JSON.readTree(r.out());
        assertThat(v.at("/checks/structure").asText())
                .isEqualTo("E-FORMAT: snapshot format \"spice.agent.snapshot/v1alpha9\" is unknown");
        assertThat(v.at("/checks/payload").asText()).isEqualTo("ok: valid canonical v1alpha2");
    }

    @Test
    void inspect_jsonMapping_accepted(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("env.json");
        Files.writeString(f, Envelope.parse(vectorEnvelope(1)).toJson());
        CliRun r = CliRun.of("snapshot", "inspect", f.toString());
        assertThat(r.exitCode()).isZero();
        JsonNode v = JSON.readTree(r.out());
        assertThat(v.at("/encoding").asText()).isEqualTo("protobuf JSON mapping");
        assertThat(v.at("/payload/status").asText()).isEqualTo("completed");
        assertThat(v.at("/payload/resumable").asBoolean()).isFalse();
    }

    @Test
    void inspect_tamperedPayload_reportsDigestMismatchAndExits1(@TempDir Path dir) throws Exception {
        byte[] env = vectorEnvelope(0);
        // Flip a byte inside the payload text ("List the files." -> "Lisu the files.").
        String s = new String(env, StandardCharsets.ISO_8859_1);
        int at = s.indexOf("List the files.") + 3;
        env[at] ^= 1;
        Path f = dir.resolve("tampered.pb");
        Files.write(f, env);
        CliRun r = CliRun.of("snapshot", "inspect", f.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        JsonNode v = JSON.readTree(r.out());
        assertThat(v.at("/checks/structure").asText()).startsWith("E-DIGEST");
        assertThat(v.at("/checks/digest").asText()).startsWith("mismatch");
    }

    @Test
    void inspect_notAnEnvelope_refusedWithOneLine(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("junk.bin");
        Files.write(f, new byte[] {(byte) 0xFF, 0x01, 0x02});
        CliRun r = CliRun.of("snapshot", "inspect", f.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.out()).isEqualTo(f + ": REJECTED E-ENCODING not a canonical SnapshotEnvelope encoding (unknown field, malformed or non-canonical bytes)\n");
    }
}
