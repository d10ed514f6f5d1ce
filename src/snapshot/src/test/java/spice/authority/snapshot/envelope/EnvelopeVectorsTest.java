package spice.authority.snapshot.envelope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.SpecFiles.hex;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.payload.Snapshot;

/**
 * vectors/envelope.json and vectors-v1alpha3/envelope.json as they are: parse, validate, verify
 * through the run subkey, re-seal; the v1alpha3 format bound by the MAC; the v1alpha3 records'
 * snapshot bindings (the record codec itself lives in the authority module, whose tests read
 * record.json).
 */
class EnvelopeVectorsTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void everyVector_parsesValidatesVerifiesAndReseals() throws Exception {
        assertThat(failures("vectors/envelope.json", SnapshotFormat.V1ALPHA2)).isEmpty();
    }

    @Test
    void everyV1alpha3Vector_parsesValidatesVerifiesAndReseals() throws Exception {
        assertThat(failures("vectors-v1alpha3/envelope.json", SnapshotFormat.V1ALPHA3)).isEmpty();
    }

    /**
     * Each v1alpha3 envelope with its format field rewritten to v1alpha2 (a known format of the
     * same length): structurally valid, but its claim no longer verifies, its payload is not a
     * v1alpha2 payload, and where only v1alpha2 is accepted the original is E-FORMAT naming it.
     */
    @Test
    void v1alpha3Vector_formatSwapped_failsVerification() throws Exception {
        JsonNode doc = SpecFiles.json("vectors-v1alpha3/envelope.json");
        int n = 0;
        for (JsonNode c : doc.get("cases")) {
            n++;
            byte[] bytes = hex(c.get("envelope_hex").asText());
            byte[] swapped = swapFormat(bytes);
            JsonNode a = c.get("authority");
            byte[] scope = hex(a.get("scope_id_hex").asText());
            Envelope original = Envelope.parse(bytes);
            Envelope env = Envelope.parse(swapped);
            assertThat(env.format()).isEqualTo(SnapshotFormat.V1ALPHA2.wire());
            Envelopes.Validated v = Envelopes.validate(env);
            assertThat(v.claimInput().snapshotFormat()).isEqualTo(SnapshotFormat.V1ALPHA2);
            try (SecretKeyBytes master = SecretKeyBytes.copyOf(hex(a.get("master_key_hex").asText()), SecretAccess.grant());
                 AuthorityKey key = RunSubkey.authorityFor(master, scope, SpecFiles.u64(a, "authority_key_generation"), env.runId(),
                         SpecFiles.u64(a, "run_generation"))) {
                Envelopes.verify(Envelopes.validate(original), key::verify);
                assertThatThrownBy(() -> Envelopes.verify(v, key::verify)).as(c.get("name").asText())
                        .isInstanceOf(VerificationException.class);
            }
            assertThatThrownBy(() -> Envelopes.validateStrict(env)).isInstanceOfSatisfying(EnvelopeRejectedException.class, e -> {
                assertThat(e.rule()).isEqualTo(EnvelopeRule.E_PAYLOAD);
                assertThat(e.payloadRule()).isEqualTo(spice.authority.snapshot.payload.PayloadRule.P_VERSION);
            });
            assertThatThrownBy(() -> Envelopes.validate(original, Set.of(SnapshotFormat.V1ALPHA2)))
                    .isInstanceOfSatisfying(EnvelopeRejectedException.class, e -> {
                        assertThat(e.rule()).isEqualTo(EnvelopeRule.E_FORMAT);
                        assertThat(e.getMessage()).contains("\"spice.agent.snapshot/v1alpha3\" is not accepted here");
                    });
        }
        assertThat(n).isEqualTo(5);
    }

    /** Every SUSPENDED v1alpha3 record binds one envelope vector: format, sequence, lifecycle, digest, claim MAC. */
    @Test
    void v1alpha3Records_bindTheirEnvelopes() throws Exception {
        Map<String, Envelope> byDigest = new HashMap<>();
        for (JsonNode c : SpecFiles.json("vectors-v1alpha3/envelope.json").get("cases")) {
            Envelope e = Envelope.parse(hex(c.get("envelope_hex").asText()));
            byDigest.put(HEX.formatHex(e.sha256()), e);
        }
        int bound = 0;
        for (JsonNode c : SpecFiles.json("vectors-v1alpha3/record.json").get("cases")) {
            JsonNode snap = c.get("record").get("snapshot");
            if (snap == null) {
                continue;
            }
            bound++;
            Envelope e = byDigest.get(snap.get("payload_sha256").asText());
            assertThat(e).as(c.get("name").asText()).isNotNull();
            Envelopes.Validated v = Envelopes.validate(e);
            assertThat(SnapshotFormat.fromWire(snap.get("format").asText())).contains(SnapshotFormat.V1ALPHA3)
                    .contains(v.claimInput().snapshotFormat());
            assertThat(Long.toUnsignedString(e.lastSequence())).isEqualTo(snap.get("last_sequence").asText());
            assertThat(e.lifecycleNumber()).isEqualTo(snap.get("lifecycle").asInt()).isEqualTo(1);
            assertThat(HEX.formatHex(v.claim().hmac())).isEqualTo(snap.get("authority_hmac_sha256").asText());
            assertThat(e.runId()).isEqualTo(c.get("record").get("run_id").asText());
        }
        assertThat(bound).isEqualTo(3);
    }

    /** The envelope with its format field (tag 0x0A, length 29, first field) rewritten to v1alpha2. */
    static byte[] swapFormat(byte[] envelope) {
        byte[] v3 = SnapshotFormat.V1ALPHA3.wire().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] v2 = SnapshotFormat.V1ALPHA2.wire().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(envelope[0]).isEqualTo((byte) 0x0A);
        assertThat(envelope[1]).isEqualTo((byte) v3.length);
        assertThat(java.util.Arrays.copyOfRange(envelope, 2, 2 + v3.length)).isEqualTo(v3);
        byte[] out = envelope.clone();
        System.arraycopy(v2, 0, out, 2, v2.length);
        return out;
    }

    private static List<String> failures(String file, SnapshotFormat format) throws Exception {
        JsonNode doc = SpecFiles.json(file);
        List<String> failures = new ArrayList<>();
        for (JsonNode c : doc.get("cases")) {
            String name = c.get("name").asText();
            byte[] bytes = hex(c.get("envelope_hex").asText());
            if (bytes.length != c.get("envelope_length").asInt()) {
                failures.add(name + ": envelope length");
            }
            JsonNode a = c.get("authority");
            JsonNode f = c.get("fields");
            byte[] scope = hex(a.get("scope_id_hex").asText());
            long keyGen = SpecFiles.u64(a, "authority_key_generation");
            long runGen = SpecFiles.u64(a, "run_generation");
            Envelope env = Envelope.parse(bytes);
            assertThat(env.toBinary()).isEqualTo(bytes);
            Envelopes.Validated v = Envelopes.validate(env);
            if (!HEX.formatHex(v.claimInput().canonicalMacInput(scope, keyGen)).equals(c.get("canonical_mac_input_hex").asText())) {
                failures.add(name + ": canonical MAC input");
            }
            if (!env.runId().equals(f.get("run_id").asText()) || env.lastSequence() != SpecFiles.u64(f, "last_sequence")
                    || env.lifecycleNumber() != f.get("lifecycle_number").asInt() || !env.lifecycleName().equals(f.get("lifecycle").asText())) {
                failures.add(name + ": fields");
            }
            try (SecretKeyBytes master = SecretKeyBytes.copyOf(hex(a.get("master_key_hex").asText()), SecretAccess.grant())) {
                try (SecretKeyBytes sub = RunSubkey.derive(master, scope, env.runId(), runGen)) {
                    if (!HEX.formatHex(sub.toByteArray(SecretAccess.grant())).equals(a.get("run_subkey_hex").asText())) {
                        failures.add(name + ": subkey");
                    }
                }
                try (AuthorityKey key = RunSubkey.authorityFor(master, scope, keyGen, env.runId(), runGen)) {
                    Envelopes.verify(v, key::verify);
                    if (!HEX.formatHex(v.claim().hmac()).equals(c.get("hmac_sha256_hex").asText())) {
                        failures.add(name + ": claim hmac");
                    }
                    // The same payload sealed by us gives the identical envelope bytes.
                    Snapshot s = Envelopes.validateStrict(env).snapshot();
                    if (s.format() != format || v.claimInput().snapshotFormat() != format || !env.format().equals(format.wire())) {
                        failures.add(name + ": format");
                    }
                    Envelope again = Envelopes.seal(s, key::sign);
                    if (!java.util.Arrays.equals(again.toBinary(), bytes)) {
                        failures.add(name + ": re-sealed envelope differs");
                    }
                    // JSON mapping round trip.
                    assertThat(Envelope.parseJson(env.toJson()).toBinary()).isEqualTo(bytes);
                }
                // A different run generation's subkey must not verify.
                try (AuthorityKey wrong = RunSubkey.authorityFor(master, scope, keyGen, env.runId(), runGen + 1)) {
                    assertThatThrownBy(() -> Envelopes.verify(v, wrong::verify)).isInstanceOf(VerificationException.class);
                }
            }
        }
        return failures;
    }
}
