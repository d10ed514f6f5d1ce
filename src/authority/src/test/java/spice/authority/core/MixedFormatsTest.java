package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.SpecFiles.hex;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * One authority directory holding SUSPENDED runs of both formats (the reference's own records and
 * envelopes, vectors/ and vectors-v1alpha3/): each verifies against its own format, nothing
 * converts, and a format the policy refuses is refused by name with nothing written.
 */
class MixedFormatsTest {
    private static final JsonNode V2 = SpecFiles.json("vectors/record.json");
    private static final JsonNode V3 = SpecFiles.json("vectors-v1alpha3/record.json");
    private static final String V2_ENVELOPE = SpecFiles.json("vectors/envelope.json").get("cases").get(0).get("envelope_hex").asText();
    private static final String V3_ENVELOPE = envelopeCase("suspended-run-2-generation-2");
    private static final String WIRE2 = SnapshotFormat.V1ALPHA2.wire();
    private static final String WIRE3 = SnapshotFormat.V1ALPHA3.wire();

    private static String envelopeCase(String name) {
        for (JsonNode c : SpecFiles.json("vectors-v1alpha3/envelope.json").get("cases")) {
            if (c.get("name").asText().equals(name)) {
                return c.get("envelope_hex").asText();
            }
        }
        throw new AssertionError(name);
    }

    private static JsonNode recordCase(JsonNode doc, String name) {
        for (JsonNode c : doc.get("cases")) {
            if (c.get("name").asText().equals(name)) {
                return c;
            }
        }
        throw new AssertionError(name);
    }

    /** run-1 SUSPENDED in v1alpha2, run-2 SUSPENDED (generation 2) in v1alpha3, one identity. */
    private static MemoryDirectory mixed() {
        MemoryDirectory dir = new MemoryDirectory();
        dir.putFile("identity.key", hex(V2.at("/store/identity_key_file_hex").asText()));
        for (JsonNode c : new JsonNode[] {recordCase(V2, "suspended"), recordCase(V3, "suspended-generation-2")}) {
            dir.putFile(c.get("state_file").asText(), hex(c.get("signed_line_hex").asText()));
        }
        return dir;
    }

    private static Map<String, String> files(MemoryDirectory dir) {
        Map<String, String> out = new TreeMap<>();
        dir.snapshotFiles().forEach((k, v) -> out.put(k, HexFormat.of().formatHex(v)));
        return out;
    }

    private static String stateFile(JsonNode doc, String name) {
        return recordCase(doc, name).get("state_file").asText();
    }

    @Test
    void prepareImport_oneDirectoryBothFormats_eachImportsWithItsOwnEnvelope() throws Exception {
        MemoryDirectory dir = mixed();
        try (RunAuthority a = RunAuthority.open(dir, Fixtures.random())) {
            assertThat(a.unreadableAtOpen()).contains(Map.of());
            assertThat(a.inspect(new RunId("run-1")).orElseThrow().snapshot().format()).isEqualTo(SnapshotFormat.V1ALPHA2);
            assertThat(a.inspect(new RunId("run-2")).orElseThrow().snapshot().format()).isEqualTo(SnapshotFormat.V1ALPHA3);
            for (String env : new String[] {V2_ENVELOPE, V3_ENVELOPE}) {
                RunImport imp = a.prepareImport(Envelope.parse(hex(env)), Cancellation.none());
                imp.consume(Cancellation.none());
                imp.activate(Cancellation.none()).close();
            }
            assertThat(a.inspect(new RunId("run-1")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
            assertThat(a.inspect(new RunId("run-2")).orElseThrow().runGeneration()).isEqualTo(3);
        }
    }

    @Test
    void prepareImport_envelopeFormatSwapped_failsVerificationAndWritesNothing() throws Exception {
        MemoryDirectory dir = mixed();
        try (RunAuthority a = RunAuthority.open(dir, Fixtures.random())) {
            Map<String, String> before = files(dir);
            // Same length (29 bytes), so only the format bytes change: each envelope now names
            // the other format than the one its record binds and its claim was made for.
            String v3as2 = V3_ENVELOPE.replace(hexOf(WIRE3), hexOf(WIRE2));
            String v2as3 = V2_ENVELOPE.replace(hexOf(WIRE2), hexOf(WIRE3));
            assertThat(v3as2).isNotEqualTo(V3_ENVELOPE);
            assertThat(v2as3).isNotEqualTo(V2_ENVELOPE);
            for (String env : new String[] {v3as2, v2as3}) {
                assertThatThrownBy(() -> a.prepareImport(Envelope.parse(hex(env)), Cancellation.none()))
                        .isInstanceOf(AuthorityException.Verification.class);
            }
            assertThat(files(dir)).isEqualTo(before);
        }
    }

    @Test
    void prepareImport_recordFormatSwapped_failsVerificationAndCountsBadMac() throws Exception {
        MemoryDirectory dir = mixed();
        for (String[] swap : new String[][] {{"suspended", WIRE2, WIRE3}}) {
            String name = stateFile(V2, swap[0]);
            String line = new String(dir.visibleFile(name), StandardCharsets.UTF_8);
            dir.putFile(name, line.replace(swap[1], swap[2]).getBytes(StandardCharsets.UTF_8));
        }
        String v3 = stateFile(V3, "suspended-generation-2");
        dir.putFile(v3, new String(dir.visibleFile(v3), StandardCharsets.UTF_8).replace(WIRE3, WIRE2).getBytes(StandardCharsets.UTF_8));
        try (RunAuthority a = RunAuthority.open(dir, Fixtures.random())) {
            assertThat(a.unreadableAtOpen()).contains(Map.of(UnreadableReason.BAD_MAC, 2));
            Map<String, String> before = files(dir);
            for (String env : new String[] {V2_ENVELOPE, V3_ENVELOPE}) {
                assertThatThrownBy(() -> a.prepareImport(Envelope.parse(hex(env)), Cancellation.none()))
                        .isInstanceOf(AuthorityException.Verification.class);
            }
            assertThat(files(dir)).isEqualTo(before);
            assertThat(a.listRecords().unreadableByReason()).isEqualTo(Map.of(UnreadableReason.BAD_MAC, 2));
        }
    }

    @Test
    void policyRefusingV1alpha3_envelopeAndRecordRefusedByNameNothingWritten() throws Exception {
        MemoryDirectory dir = mixed();
        FormatPolicy v2only = FormatPolicy.standard().refusing(SnapshotFormat.V1ALPHA3);
        try (RunAuthority a = RunAuthority.open(dir, Fixtures.random(), v2only)) {
            assertThat(a.unreadableAtOpen()).contains(Map.of(UnreadableReason.UNSUPPORTED_FORMAT, 1));
            Map<String, String> before = files(dir);
            assertThatThrownBy(() -> a.prepareImport(Envelope.parse(hex(V3_ENVELOPE)), Cancellation.none()))
                    .isInstanceOf(AuthorityException.UnsupportedFormat.class)
                    .hasMessageContaining(WIRE3)
                    .satisfies(e -> assertThat(((AuthorityException) e).code()).isEqualTo("unsupported_format"));
            assertThatThrownBy(() -> a.inspect(new RunId("run-2")))
                    .isInstanceOf(AuthorityException.UnsupportedFormat.class).hasMessageContaining(WIRE3);
            assertThatThrownBy(() -> a.abandon(new RunId("run-2"), Cancellation.none()))
                    .isInstanceOf(AuthorityException.UnsupportedFormat.class);
            assertThat(files(dir)).isEqualTo(before);
            RecordListing listing = a.listRecords();
            assertThat(listing.records()).extracting(RunRecord::runId).containsExactly("run-1");
            assertThat(listing.unreadableByReason()).isEqualTo(Map.of(UnreadableReason.UNSUPPORTED_FORMAT, 1));
            assertThat(listing.unreadable()).isEqualTo(1);
            // The v1alpha2 run still imports under the narrowed policy.
            a.prepareImport(Envelope.parse(hex(V2_ENVELOPE)), Cancellation.none()).close();
        }
    }

    @Test
    void seal_v1alpha3Payload_recordBindsV1alpha3AndRefusedPolicyWritesNothing() throws Exception {
        byte[] payload = SpecFiles.bytes("payload-corpus/v1alpha3/valid-01-minimal-suspended.json");
        Snapshot v3 = Snapshot.decode(payload);
        assertThat(v3.format()).isEqualTo(SnapshotFormat.V1ALPHA3);
        MemoryDirectory dir = new MemoryDirectory();
        try (RunAuthority a = RunAuthority.open(dir, Fixtures.random())) {
            ActiveRun run = a.start(new RunId(v3.runId()), Cancellation.none());
            Envelope env = run.seal(v3, Cancellation.none()).envelope();
            assertThat(env.format()).isEqualTo(WIRE3);
            RunRecord rec = a.inspect(new RunId(v3.runId())).orElseThrow();
            assertThat(rec.snapshot().format()).isEqualTo(SnapshotFormat.V1ALPHA3);
            assertThat(new String(dir.visibleFile(RecordCodec.fileStem(v3.runId()) + ".state"), StandardCharsets.UTF_8))
                    .contains("\"snapshot\":{\"format\":\"" + WIRE3 + "\"");
            // The same payload again is the same envelope (reissue binds the record's format).
            assertThat(a.reissue(v3)).isEqualTo(env);
            run.close();
        }
        MemoryDirectory other = new MemoryDirectory();
        try (RunAuthority a = RunAuthority.open(other, Fixtures.random(), FormatPolicy.standard().refusing(SnapshotFormat.V1ALPHA3))) {
            ActiveRun run = a.start(new RunId(v3.runId()), Cancellation.none());
            Map<String, String> before = files(other);
            assertThatThrownBy(() -> run.seal(v3, Cancellation.none()))
                    .isInstanceOf(AuthorityException.UnsupportedFormat.class).hasMessageContaining(WIRE3);
            assertThat(files(other)).isEqualTo(before);
            assertThat(a.inspect(new RunId(v3.runId())).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
            run.close();
        }
    }

    @Test
    void verifyFile_validMacUnknownFormat_isUnsupportedNamingIt() throws Exception {
        JsonNode c = recordCase(V2, "suspended");
        String json = c.get("record_json_utf8").asText().replace(WIRE2, "spice.agent.snapshot/v9");
        try (SecretKeyBytes k = SecretKeyBytes.copyOf(hex(V2.at("/store/master_key_hex").asText()), SecretAccess.grant());
             HmacSha256 mac = new HmacSha256(k)) {
            byte[] jsonBytes = json.getBytes(StandardCharsets.UTF_8);
            String line = "{\"record\":" + json + ",\"hmac_sha256\":\""
                    + HexFormat.of().formatHex(mac.compute(RecordCodec.macInput(jsonBytes))) + "\"}\n";
            assertThatThrownBy(() -> RecordCodec.verifyFile(line.getBytes(StandardCharsets.UTF_8), mac))
                    .isInstanceOfSatisfying(RecordCodec.Unverifiable.class, e -> {
                        assertThat(e.reason()).isEqualTo(UnreadableReason.UNSUPPORTED_FORMAT);
                        assertThat(e.format()).isEqualTo("spice.agent.snapshot/v9");
                    });
            // The same record with a MAC that does not verify is a bad MAC, not an unknown format.
            String forged = line.replace("\"hmac_sha256\":\"", "\"hmac_sha256\":\"00").substring(0, line.length()) ;
            assertThatThrownBy(() -> RecordCodec.verifyFile(forged.getBytes(StandardCharsets.UTF_8), mac))
                    .isInstanceOfSatisfying(RecordCodec.Unverifiable.class,
                            e -> assertThat(e.reason()).isIn(UnreadableReason.BAD_MAC, UnreadableReason.MALFORMED));
        }
    }

    private static String hexOf(String text) {
        return HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
    }
}
