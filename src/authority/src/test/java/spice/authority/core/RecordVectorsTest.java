package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.SpecFiles.hex;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.envelope.Envelope;

/**
 * vectors/record.json and vectors-v1alpha3/record.json as they are: identity file, record JSON,
 * record MAC, signed line, file names.
 */
class RecordVectorsTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final JsonNode DOC = SpecFiles.json("vectors/record.json");
    private static final JsonNode DOC_V3 = SpecFiles.json("vectors-v1alpha3/record.json");

    private static HmacSha256 masterMac() {
        try (SecretKeyBytes k = SecretKeyBytes.copyOf(hex(DOC.at("/store/master_key_hex").asText()), SecretAccess.grant())) {
            return new HmacSha256(k);
        }
    }

    static RunRecord recordOf(JsonNode r) {
        RunRecord.SnapshotBinding b = null;
        if (r.has("snapshot")) {
            JsonNode s = r.get("snapshot");
            b = new RunRecord.SnapshotBinding(SnapshotFormat.fromWire(s.get("format").asText()).orElseThrow(),
                    s.get("last_sequence").asLong(), s.get("lifecycle").asInt(),
                    hex(s.get("payload_sha256").asText()), hex(s.get("authority_hmac_sha256").asText()));
        }
        return new RunRecord(r.get("scope_id").asText(), r.get("authority_key_generation").asLong(), r.get("run_id").asText(),
                r.get("run_generation").asLong(), RunPhase.valueOf(r.get("phase").asText()), b);
    }

    @Test
    void identityFile_vector_parsesAndReencodesByteForByte() {
        byte[] file = hex(DOC.at("/store/identity_key_file_hex").asText());
        assertThat(file).hasSize(DOC.at("/store/identity_key_file_length").asInt());
        try (AuthorityIdentity id = AuthorityIdentity.parse(file)) {
            assertThat(id.generation()).isEqualTo(DOC.at("/store/authority_key_generation").asLong());
            assertThat(id.scopeIdHex()).isEqualTo(DOC.at("/store/scope_id_hex").asText());
            assertThat(id.encode()).isEqualTo(file);
            assertThat(HEX.formatHex(id.masterKey().toByteArray(SecretAccess.grant()))).isEqualTo(DOC.at("/store/master_key_hex").asText());
            assertThat(id.toString()).doesNotContain("0202020202");
        }
    }

    @Test
    void identityFile_invalidContent_refused() {
        byte[] good = hex(DOC.at("/store/identity_key_file_hex").asText());
        byte[] zeroGen = good.clone();
        zeroGen[7] = 0;
        byte[] zeroScope = good.clone();
        java.util.Arrays.fill(zeroScope, 8, 40, (byte) 0);
        byte[] zeroKey = good.clone();
        java.util.Arrays.fill(zeroKey, 40, 72, (byte) 0);
        byte[] sameScopeKey = good.clone();
        System.arraycopy(good, 8, sameScopeKey, 40, 32);
        for (byte[] bad : List.of(java.util.Arrays.copyOf(good, 71), java.util.Arrays.copyOf(good, 73), zeroGen, zeroScope, zeroKey, sameScopeKey)) {
            assertThatThrownBy(() -> AuthorityIdentity.parse(bad)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void records_everyVector_encodeSignAndVerifyByteForByte() throws Exception {
        List<String> failures = new ArrayList<>();
        try (HmacSha256 mac = masterMac()) {
            List<JsonNode> cases = new ArrayList<>();
            DOC.get("cases").forEach(cases::add);
            DOC_V3.get("cases").forEach(cases::add);
            assertThat(DOC_V3.get("store")).isEqualTo(DOC.get("store"));
            for (JsonNode c : cases) {
                String name = c.get("name").asText() + (c.at("/record/snapshot/format").asText().isEmpty() ? ""
                        : " (" + c.at("/record/snapshot/format").asText() + ")");
                RunRecord rec = recordOf(c.get("record"));
                byte[] json = RecordCodec.encodeRecord(rec);
                if (!new String(json, StandardCharsets.UTF_8).equals(c.get("record_json_utf8").asText())) {
                    failures.add(name + ": record JSON");
                }
                if (!HEX.formatHex(RecordCodec.macInput(json)).equals(c.get("mac_input_hex").asText())) {
                    failures.add(name + ": MAC input");
                }
                if (!HEX.formatHex(mac.compute(RecordCodec.macInput(json))).equals(c.get("record_hmac_sha256_hex").asText())) {
                    failures.add(name + ": record MAC");
                }
                byte[] line = RecordCodec.signedFile(rec, mac);
                if (!HEX.formatHex(line).equals(c.get("signed_line_hex").asText()) || line.length != c.get("signed_line_length").asInt()) {
                    failures.add(name + ": signed line");
                }
                if (!RecordCodec.verifyFile(hex(c.get("signed_line_hex").asText()), mac).equals(rec)) {
                    failures.add(name + ": decode");
                }
                String stem = RecordCodec.fileStem(rec.runId());
                if (!(stem + ".state").equals(c.get("state_file").asText()) || !(stem + ".lock").equals(c.get("lock_file").asText())) {
                    failures.add(name + ": file names");
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void verifyFile_nonCanonicalButEquivalent_acceptedAsTheReferenceDoes() throws Exception {
        JsonNode c = DOC.get("cases").get(0);
        String line = c.get("signed_line_utf8").asText();
        try (HmacSha256 mac = masterMac()) {
            RunRecord expected = recordOf(c.get("record"));
            String spaced = line.replace(",", " ,\n ").replace("\n\n", "\n");
            String upperNames = line.replace("\"phase\"", "\"PHASE\"").replace("\"run_id\"", "\"Run_Id\"");
            String nullSnapshot = line.replace("\"phase\":\"ACTIVE\"", "\"phase\":\"ACTIVE\",\"snapshot\":null");
            String upperMac = line.replace(c.get("record_hmac_sha256_hex").asText(), c.get("record_hmac_sha256_hex").asText().toUpperCase());
            String noLf = line.substring(0, line.length() - 1);
            for (String variant : List.of(spaced, upperNames, nullSnapshot, upperMac, noLf)) {
                assertThat(RecordCodec.verifyFile(variant.getBytes(StandardCharsets.UTF_8), mac)).isEqualTo(expected);
            }
        }
    }

    @Test
    void verifyFile_tamperedOrForeign_isUnverifiableNeverACrash() throws Exception {
        JsonNode c = DOC.get("cases").get(1);
        byte[] line = hex(c.get("signed_line_hex").asText());
        try (HmacSha256 mac = masterMac()) {
            int accepted = 0;
            for (int i = 0; i < line.length; i++) {
                for (int delta : new int[] {1, 0x20, 0x80}) {
                    byte[] m = line.clone();
                    m[i] ^= (byte) delta;
                    try {
                        RunRecord r = RecordCodec.verifyFile(m, mac);
                        // Only a case change of a member name or of MAC hex may still verify.
                        assertThat(r).isEqualTo(recordOf(c.get("record")));
                        accepted++;
                    } catch (RecordCodec.Unverifiable expected) {
                        // refused
                    }
                }
            }
            assertThat(accepted).isLessThan(line.length / 2);
            String s = c.get("signed_line_utf8").asText();
            for (String bad : List.of(s.replace("\"version\":1", "\"version\":2"), s.replace("}}", ",\"extra\":1}}"),
                    s + "{}", "", "null", "[]", s.replace("SUSPENDED", "RUNNING"), s.replace("\"lifecycle\":1", "\"lifecycle\":2"))) {
                assertThatThrownBy(() -> RecordCodec.verifyFile(bad.getBytes(StandardCharsets.UTF_8), mac))
                        .isInstanceOf(RecordCodec.Unverifiable.class);
            }
        }
        try (SecretKeyBytes other = SecretKeyBytes.copyOf(new byte[32], SecretAccess.grant()); HmacSha256 wrong = new HmacSha256(other)) {
            assertThatThrownBy(() -> RecordCodec.verifyFile(line, wrong)).isInstanceOf(RecordCodec.Unverifiable.class);
        }
    }

    /**
     * Cross-implementation proof: a directory laid out by the reference (identity file and the
     * SUSPENDED record of record.json) imports the reference's envelope (envelope.json case
     * suspended-run-1) through the per-run subkey.
     */
    @Test
    void prepareImport_referenceDirectoryAndEnvelope_verifiesThroughRunSubkey() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        dir.putFile("identity.key", hex(DOC.at("/store/identity_key_file_hex").asText()));
        JsonNode suspended = DOC.get("cases").get(1);
        dir.putFile(suspended.get("state_file").asText(), hex(suspended.get("signed_line_hex").asText()));
        byte[] envBytes = hex(SpecFiles.json("vectors/envelope.json").get("cases").get(0).get("envelope_hex").asText());
        try (RunAuthority authority = RunAuthority.open(dir, Fixtures.random())) {
            assertThat(authority.scopeIdHex()).isEqualTo(DOC.at("/store/scope_id_hex").asText());
            RunImport imp = authority.prepareImport(Envelope.parse(envBytes), Cancellation.none());
            imp.consume(Cancellation.none());
            ActiveRun active = imp.activate(Cancellation.none());
            assertThat(active.runGeneration()).isEqualTo(2);
            assertThat(authority.inspect(new RunId("run-1")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
            active.close();
        }
    }
}
