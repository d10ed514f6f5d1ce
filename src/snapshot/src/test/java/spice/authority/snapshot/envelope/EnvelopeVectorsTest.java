package spice.authority.snapshot.envelope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.SpecFiles.hex;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.payload.Snapshot;

/** vectors/envelope.json as it is: parse, validate, verify through the run subkey, re-seal. */
class EnvelopeVectorsTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void everyVector_parsesValidatesVerifiesAndReseals() throws Exception {
        JsonNode doc = SpecFiles.json("vectors/envelope.json");
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
        assertThat(failures).isEmpty();
    }
}
