package spice.authority.snapshot.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.SpecFiles;

/** Every public corpus file and every transcript, loaded as it is, in one loop per set. */
class PayloadCorpusTest {

    @Test
    void corpus_everyCase_matchesIndexedVerdict() throws Exception {
        JsonNode index = SpecFiles.json("payload-corpus/public/index.json");
        List<String> failures = new ArrayList<>();
        int n = 0;
        for (JsonNode c : index.get("cases")) {
            n++;
            String file = c.get("file").asText();
            byte[] bytes = SpecFiles.bytes("payload-corpus/public/" + file);
            if (c.hasNonNull("sha256")) {
                String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
                if (!sha.equals(c.get("sha256").asText())) {
                    failures.add(file + ": corpus file differs from its index sha256");
                    continue;
                }
            }
            String expected = c.get("expected").asText();
            boolean canonical = !c.has("canonical") || c.get("canonical").isNull() || c.get("canonical").asBoolean();
            try {
                Snapshot s = Snapshot.decode(bytes);
                if (!expected.equals("valid")) {
                    failures.add(file + ": accepted, expected " + c.get("rule").asText());
                } else if (!canonical) {
                    failures.add(file + ": non-canonical file accepted (we are stricter: P-CANONICAL)");
                } else if (!java.util.Arrays.equals(s.canonicalBytes(), bytes)) {
                    failures.add(file + ": canonical bytes differ");
                }
            } catch (PayloadRejectedException e) {
                String want = expected.equals("valid") ? (canonical ? "(valid)" : "P-CANONICAL") : c.get("rule").asText();
                if (!e.rule().id().equals(want)) {
                    failures.add(file + ": got " + e.getMessage() + ", expected " + want);
                }
            }
        }
        assertThat(n).isGreaterThanOrEqualTo(50);
        assertThat(failures).isEmpty();
    }

    /**
     * Every v1alpha3 corpus file under v1alpha3-only decoding: valid canonical files decode and
     * re-encode byte-identically; valid non-canonical ones (the reference accepts them) break no
     * rule but ours, P-CANONICAL (ARCHITECTURE.md "stricter" 1), which is reported only when no
     * other rule is broken: so the Go readings they test (absent member reads "", member names fold,
     * the later duplicate wins) are applied; every invalid file is refused with its indexed rule.
     */
    @Test
    void corpusV1alpha3_everyCase_matchesIndexedVerdict() throws Exception {
        JsonNode index = SpecFiles.json("payload-corpus/v1alpha3/index.json");
        assertThat(index.get("format").asText()).isEqualTo(SnapshotFormat.V1ALPHA3.wire());
        List<String> failures = new ArrayList<>();
        int n = 0;
        int nonCanonical = 0;
        for (JsonNode c : index.get("cases")) {
            n++;
            String file = c.get("file").asText();
            byte[] bytes = SpecFiles.bytes("payload-corpus/v1alpha3/" + file);
            boolean valid = c.get("expected").asText().equals("valid");
            boolean canonical = !c.has("canonical") || c.get("canonical").isNull() || c.get("canonical").asBoolean();
            nonCanonical += valid && !canonical ? 1 : 0;
            String want = valid ? (canonical ? "(valid)" : "P-CANONICAL") : c.get("rule").asText();
            try {
                Snapshot s = Snapshot.decode(bytes, Set.of(SnapshotFormat.V1ALPHA3));
                if (!want.equals("(valid)")) {
                    failures.add(file + ": accepted, expected " + want);
                } else if (!java.util.Arrays.equals(s.canonicalBytes(), bytes) || s.format() != SnapshotFormat.V1ALPHA3) {
                    failures.add(file + ": canonical bytes or format differ");
                }
            } catch (PayloadRejectedException e) {
                if (!e.rule().id().equals(want)) {
                    failures.add(file + ": got " + e.getMessage() + ", expected " + want);
                }
            }
        }
        assertThat(n).isEqualTo(51);
        assertThat(nonCanonical).isEqualTo(4);
        assertThat(failures).isEmpty();
    }

    /**
     * The same files where both formats are accepted: the same verdicts, except the one file that
     * is a canonical v1alpha2 payload, which is valid v1alpha2 here.
     */
    @Test
    void corpusV1alpha3_bothFormatsAccepted_sameVerdictsButTheV1alpha2File() throws Exception {
        List<String> failures = new ArrayList<>();
        for (JsonNode c : SpecFiles.json("payload-corpus/v1alpha3/index.json").get("cases")) {
            String file = c.get("file").asText();
            byte[] bytes = SpecFiles.bytes("payload-corpus/v1alpha3/" + file);
            String got;
            try {
                got = "valid " + Snapshot.decode(bytes).format().wire();
            } catch (PayloadRejectedException e) {
                got = e.rule().id();
            }
            boolean canonical = !c.has("canonical") || c.get("canonical").isNull() || c.get("canonical").asBoolean();
            String want = file.equals("invalid-version-v1alpha2-payload.json") ? "valid " + SnapshotFormat.V1ALPHA2.wire()
                    : c.get("expected").asText().equals("valid") ? (canonical ? "valid " + SnapshotFormat.V1ALPHA3.wire() : "P-CANONICAL")
                    : c.get("rule").asText();
            if (!got.equals(want)) {
                failures.add(file + ": got " + got + ", expected " + want);
            }
        }
        assertThat(failures).isEmpty();
    }

    /** P-VERSION refusals of the v1alpha3 corpus name the version text. */
    @Test
    void corpusV1alpha3_versionRefusals_nameTheVersion() {
        for (String[] c : new String[][] {
                {"invalid-version-v1alpha2-with-workspace.json", "\"spice.agent.snapshot/v1alpha2\""},
                {"invalid-version-v1alpha2-payload.json", "\"spice.agent.snapshot/v1alpha2\""},
                {"invalid-version-missing.json", "version \"\""}}) {
            assertThatThrownBy(() -> Snapshot.decode(SpecFiles.bytes("payload-corpus/v1alpha3/" + c[0]), Set.of(SnapshotFormat.V1ALPHA3)))
                    .as(c[0]).isInstanceOf(PayloadRejectedException.class).hasMessageStartingWith("P-VERSION: ").hasMessageContaining(c[1]);
        }
    }

    /** Every valid v1alpha2 corpus file where only v1alpha3 is accepted: P-VERSION, not P-UNKNOWN. */
    @Test
    void corpusV1alpha2_validFiles_whereOnlyV1alpha3IsAccepted_version() throws Exception {
        List<String> failures = new ArrayList<>();
        for (JsonNode c : SpecFiles.json("payload-corpus/public/index.json").get("cases")) {
            if (!c.get("expected").asText().equals("valid")) {
                continue;
            }
            String file = c.get("file").asText();
            try {
                Snapshot.decode(SpecFiles.bytes("payload-corpus/public/" + file), Set.of(SnapshotFormat.V1ALPHA3));
                failures.add(file + ": accepted");
            } catch (PayloadRejectedException e) {
                if (e.rule() != PayloadRule.P_VERSION) {
                    failures.add(file + ": " + e.getMessage());
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void transcripts_all100_validateAndReencodeByteIdentically() throws Exception {
        List<String> failures = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(SpecFiles.resolve("transcripts"))) {
            files = s.filter(p -> p.getFileName().toString().startsWith("tau-")).sorted().toList();
        }
        for (Path f : files) {
            byte[] bytes = Files.readAllBytes(f);
            try {
                Snapshot s = Snapshot.decode(bytes);
                if (!java.util.Arrays.equals(s.canonicalBytes(), bytes)) {
                    failures.add(f.getFileName() + ": re-encoding differs");
                }
            } catch (PayloadRejectedException e) {
                failures.add(f.getFileName() + ": " + e.getMessage());
            }
        }
        assertThat(files).hasSize(100);
        assertThat(failures).isEmpty();
    }
}
