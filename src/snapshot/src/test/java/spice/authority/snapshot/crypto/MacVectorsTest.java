package spice.authority.snapshot.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.SpecFiles.hex;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.SpecFiles;

/** vectors/mac-input.json, vectors-v1alpha3/mac-input.json and vectors/run-subkey.json as they are, plus RFC 4231. */
class MacVectorsTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void macInput_everyVector_buildsIdenticalInputAndHmac() {
        assertThat(macInputFailures("vectors/mac-input.json", SnapshotFormat.V1ALPHA2)).isEmpty();
    }

    @Test
    void macInputV1alpha3_everyVector_buildsIdenticalInputAndHmac() {
        assertThat(macInputFailures("vectors-v1alpha3/mac-input.json", SnapshotFormat.V1ALPHA3)).isEmpty();
    }

    @Test
    void goldenCaseV1alpha3_reproducesHardCodedGoExpectation() {
        JsonNode c = SpecFiles.json("vectors-v1alpha3/mac-input.json").get("cases").get(0);
        assertThat(c.get("name").asText()).isEqualTo("suspended-go-golden");
        assertThat(c.get("hmac_sha256_hex").asText())
                .isEqualTo("05ba8690fd9c49aab5d06fda233627ef15eb12832c97c0d26cfff9243dcb9897");
    }

    /**
     * The format is bound by the MAC: every v1alpha3 vector's claim fails to verify for the same
     * input under the other format string (same length: only the last byte of the component differs).
     */
    @Test
    void macInputV1alpha3_formatSwapped_failsVerification() {
        List<String> failures = new ArrayList<>();
        for (JsonNode c : SpecFiles.json("vectors-v1alpha3/mac-input.json").get("cases")) {
            JsonNode in = c.get("inputs");
            byte[] scope = hex(in.get("scope_id_hex").asText());
            long generation = SpecFiles.u64(in, "generation");
            byte[] sha = hex(in.get("payload_sha256_hex").asText());
            ClaimInput v3 = new ClaimInput(SnapshotFormat.V1ALPHA3, in.get("run_id").asText(), SpecFiles.u64(in, "last_sequence"),
                    in.get("lifecycle_number").asInt(), sha);
            ClaimInput swapped = new ClaimInput(SnapshotFormat.V1ALPHA2, v3.runId(), v3.lastSequence(), v3.lifecycle(), sha);
            assertThat(swapped).isNotEqualTo(v3);
            assertThat(swapped.canonicalMacInput(scope, generation)).hasSameSizeAs(v3.canonicalMacInput(scope, generation));
            Claim vectorClaim = new Claim(scope, generation, hex(c.get("hmac_sha256_hex").asText()));
            try (SecretKeyBytes k = SecretKeyBytes.copyOf(hex(in.get("key_hex").asText()), SecretAccess.grant());
                 AuthorityKey authority = new AuthorityKey(scope, generation, k)) {
                authority.verify(v3, vectorClaim);
                try {
                    authority.verify(swapped, vectorClaim);
                    failures.add(c.get("name").asText() + ": verified under v1alpha2");
                } catch (VerificationException expected) {
                    // the format is part of what was signed
                }
            } catch (VerificationException e) {
                failures.add(c.get("name").asText() + ": did not verify as v1alpha3");
            }
        }
        assertThat(failures).isEmpty();
    }

    private static List<String> macInputFailures(String file, SnapshotFormat format) {
        JsonNode doc = SpecFiles.json(file);
        List<String> failures = new ArrayList<>();
        for (JsonNode c : doc.get("cases")) {
            String name = c.get("name").asText();
            JsonNode in = c.get("inputs");
            byte[] scope = hex(in.get("scope_id_hex").asText());
            long generation = SpecFiles.u64(in, "generation");
            byte[] key = hex(in.get("key_hex").asText());
            String runId = in.get("run_id").asText();
            if (!HEX.formatHex(runId.getBytes(StandardCharsets.UTF_8)).equals(in.get("run_id_utf8_hex").asText())) {
                failures.add(name + ": run id text does not match its hex");
            }
            byte[] payload = hex(in.get("payload_hex").asText());
            byte[] sha = HmacSha256.sha256(payload);
            if (!HEX.formatHex(sha).equals(in.get("payload_sha256_hex").asText())) {
                failures.add(name + ": payload sha256");
            }
            ClaimInput ci = new ClaimInput(in.get("format").asText(), runId, SpecFiles.u64(in, "last_sequence"),
                    in.get("lifecycle_number").asInt(), sha);
            if (ci.snapshotFormat() != format) {
                failures.add(name + ": format " + ci.format());
            }
            byte[] macInput = ci.canonicalMacInput(scope, generation);
            if (!HEX.formatHex(macInput).equals(c.get("canonical_input_hex").asText())) {
                failures.add(name + ": canonical input differs");
            }
            if (macInput.length != c.get("canonical_input_length").asInt() || macInput.length != 205 + runId.getBytes(StandardCharsets.UTF_8).length) {
                failures.add(name + ": canonical input length");
            }
            try (SecretKeyBytes k = SecretKeyBytes.copyOf(key, SecretAccess.grant());
                 AuthorityKey authority = new AuthorityKey(scope, generation, k)) {
                Claim claim = authority.sign(ci);
                if (!HEX.formatHex(claim.hmac()).equals(c.get("hmac_sha256_hex").asText())) {
                    failures.add(name + ": hmac differs");
                }
                authority.verify(ci, claim);
            } catch (VerificationException e) {
                failures.add(name + ": own claim did not verify");
            }
        }
        return failures;
    }

    @Test
    void goldenCase_reproducesHardCodedGoExpectation() {
        JsonNode c = SpecFiles.json("vectors/mac-input.json").get("cases").get(0);
        assertThat(c.get("name").asText()).isEqualTo("suspended-go-golden");
        assertThat(c.get("hmac_sha256_hex").asText())
                .isEqualTo("a7ddca34b14c95bfa8f90bead111efa46aa97892aa7a093905e1a367fd77ebfd");
    }

    @Test
    void runSubkey_everyVector_derivesIdenticalSubkey() {
        JsonNode doc = SpecFiles.json("vectors/run-subkey.json");
        List<String> failures = new ArrayList<>();
        for (JsonNode c : doc.get("cases")) {
            String name = c.get("name").asText();
            JsonNode in = c.get("inputs");
            byte[] scope = hex(in.get("scope_id_hex").asText());
            String runId = in.get("run_id").asText();
            long gen = SpecFiles.u64(in, "run_generation");
            byte[] input = RunSubkey.derivationInput(scope, runId, gen);
            if (!HEX.formatHex(input).equals(c.get("hmac_input_hex").asText())) {
                failures.add(name + ": derivation input differs");
            }
            try (SecretKeyBytes master = SecretKeyBytes.copyOf(hex(in.get("master_key_hex").asText()), SecretAccess.grant());
                 SecretKeyBytes sub = RunSubkey.derive(master, scope, runId, gen)) {
                if (!HEX.formatHex(sub.toByteArray(SecretAccess.grant())).equals(c.get("subkey_hex").asText())) {
                    failures.add(name + ": subkey differs");
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    /** RFC 4231 test cases 1–7 (case 5 truncated output is checked on its prefix): key, data, HMAC. */
    private static final String[][] RFC4231 = {
            {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
            {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
            {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "dd".repeat(50),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
            {"0102030405060708090a0b0c0d0e0f10111213141516171819", "cd".repeat(50),
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
            {"0c".repeat(20), HEX.formatHex("Test With Truncation".getBytes(StandardCharsets.US_ASCII)),
                "a3b6167473100ee06e0c796c2955552b"},
            {"aa".repeat(131), HEX.formatHex("Test Using Larger Than Block-Size Key - Hash Key First".getBytes(StandardCharsets.US_ASCII)),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
            {"aa".repeat(131), HEX.formatHex(("This is a test using a larger than block-size key and a larger than block-size data."
                    + " The key needs to be hashed before being used by the HMAC algorithm.").getBytes(StandardCharsets.US_ASCII)),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
        };

    @Test
    void hmacSha256_rfc4231Vectors() {
        for (String[] c : RFC4231) {
            try (HmacSha256 mac = new HmacSha256(hex(c[0]))) {
                assertThat(HEX.formatHex(mac.compute(hex(c[1])))).startsWith(c[2]);
            }
        }
    }

    @Test
    void once_rfc4231Vectors_overSplitParts_matchAndLeaveTheKeyAsItWas() {
        for (String[] c : RFC4231) {
            byte[] key = hex(c[0]);
            byte[] data = hex(c[1]);
            int half = data.length / 2;
            byte[] once = HmacSha256.once(key, java.util.Arrays.copyOfRange(data, 0, half), new byte[0],
                    java.util.Arrays.copyOfRange(data, half, data.length));
            assertThat(HEX.formatHex(once)).as(c[2]).startsWith(c[2]);
            assertThat(key).as("the caller's key is not zeroed or changed").isEqualTo(hex(c[0]));
        }
    }

    @Test
    void once_emptyKey_isRefused() {
        assertThatThrownBy(() -> HmacSha256.once(new byte[0], new byte[] {1})).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void verify_wrongScopeGenerationOrMac_failsWithOneIdenticalError() throws Exception {
        byte[] scope = new byte[32];
        scope[0] = 1;
        byte[] sha = new byte[32];
        ClaimInput ci = new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "run-1", 7, 1, sha);
        try (SecretKeyBytes k = SecretKeyBytes.copyOf(new byte[] {
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32},
                SecretAccess.grant());
             AuthorityKey a = new AuthorityKey(scope, 3, k)) {
            Claim good = a.sign(ci);
            a.verify(ci, good);
            byte[] otherScope = scope.clone();
            otherScope[31] = 9;
            byte[] badMac = good.hmac();
            badMac[0] ^= 1;
            List<Claim> bad = List.of(new Claim(otherScope, 3, good.hmac()), new Claim(scope, 4, good.hmac()),
                    new Claim(scope, 3, badMac));
            List<Throwable> errors = new ArrayList<>();
            for (Claim b : bad) {
                assertThatThrownBy(() -> a.verify(ci, b)).isInstanceOf(VerificationException.class)
                        .satisfies(errors::add);
            }
            ClaimInput otherSeq = new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "run-1", 8, 1, sha);
            assertThatThrownBy(() -> a.verify(otherSeq, good)).satisfies(errors::add);
            assertThatThrownBy(() -> a.verify(ci, null)).satisfies(errors::add);
            assertThat(errors).allSatisfy(t -> {
                assertThat(t).isSameAs(VerificationException.failed());
                assertThat(t.getMessage()).isEqualTo("snapshot authority verification failed");
                assertThat(t.getCause()).isNull();
            });
        }
    }

    @Test
    void secretKey_destroy_zeroesAndRedacts() {
        byte[] raw = new byte[32];
        java.util.Arrays.fill(raw, (byte) 0x5a);
        SecretKeyBytes k = SecretKeyBytes.copyOf(raw, SecretAccess.grant());
        assertThat(k.toString()).isEqualTo("<redacted>").doesNotContain("5a");
        assertThat(k.storageIsZeroed()).isFalse();
        k.destroy();
        assertThat(k.storageIsZeroed()).isTrue();
        assertThatThrownBy(() -> k.toByteArray(SecretAccess.grant())).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> SecretKeyBytes.copyOf(new byte[31], SecretAccess.grant()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void claimInput_refusesWhatTheCanonicalInputCannotCarry() {
        byte[] sha = new byte[32];
        assertThatThrownBy(() -> new ClaimInput("spice.agent.snapshot/v1alpha1", "r", 1, 1, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput((SnapshotFormat) null, "r", 1, 1, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new ClaimInput("spice.agent.snapshot/v1alpha3", "r", 1, 1, sha).snapshotFormat()).isEqualTo(SnapshotFormat.V1ALPHA3);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, " r", 1, 1, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r".repeat(129), 1, 1, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r", 0, 1, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r", -1L, 1, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r", 1, 0, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r", 1, 5, sha)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r", 1, 1, new byte[31])).isInstanceOf(IllegalArgumentException.class);
        ClaimInput ok = new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, "r", -2L, 4, sha);
        assertThatThrownBy(() -> ok.canonicalMacInput(new byte[31], 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ok.canonicalMacInput(new byte[32], 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
