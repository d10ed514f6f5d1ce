package spice.authority.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-repository copy of the spec kit (spec-kit/) is complete and unchanged: every file named by
 * the three index.json files is there with its indexed SHA-256 (the rejected corpus files, for
 * which the index gives none, under one pinned digest per corpus), nothing else is, and the files
 * no index lists (the five v1alpha2 and four v1alpha3 vector files, the three indexes, the
 * tau-bench licence) have the digests of the 2026-12-01 and 2026-12-02 kits. A missing or altered copy fails here, by name, instead of being skipped or
 * surfacing as an odd failure elsewhere. After a refresh (spec-kit/README.md), update the digests.
 */
class SpecKitTest {

    /** SHA-256 of the kit files (copied 2026-12-01, see spec-kit/README.md) that no index.json lists. */
    private static final Map<String, String> PINNED = Map.ofEntries(
            Map.entry("vectors-v1alpha3/envelope.json", "5fdcea1f14f2e51bfed9f206fbc59ad8337185c7addda25d8551b628e17c21a0"),
            Map.entry("vectors-v1alpha3/mac-input.json", "65b30aad70400fd8e735c83e74a87ea82b559b31dd4f3405b0a985ea47670c2c"),
            Map.entry("vectors-v1alpha3/plan-identity.json", "2459a87237d1be51be555ecfd33e014bab6185b4ffbcfd48dc7695ee47b88b0e"),
            Map.entry("vectors-v1alpha3/record.json", "49b307cba36733f71151668c120ae7ad14a85aca03c7a494ee8c3bc3fcbf59f0"),
            Map.entry("payload-corpus/v1alpha3/index.json", "6555e83276556d50b3441ee7e44422363bd754481491eb9e0d247ca9601440e0"),
            Map.entry("vectors/envelope.json", "0162a94bcbb7999c102a406e4765915f7ad304a2df798b290b49622ccfd1a3ea"),
            Map.entry("vectors/mac-input.json", "d6654702df097c09b6a95c08e4a0ed459f6427ff0f18e0ac170f00647d7b4a2c"),
            Map.entry("vectors/plan-identity.json", "ee97be6fbfe2c4164c569c6ad4e1359b46e725d586b5d8497036a00c95aaa721"),
            Map.entry("vectors/record.json", "fd813c8f9a6ce8959e51272f4b39714b3d61dafd4f17c661611818ed5a37bdba"),
            Map.entry("vectors/run-subkey.json", "fc0dfbd7e6a5df74be4f6d6da55ed405f834be85c2e9de70b7a8c81e3f2e4ef0"),
            Map.entry("payload-corpus/public/index.json", "0a0fc5e3e6d74bc0af01e1828fbfdb9aaf64d816ae85e4e876ff7add4e8e8d1a"),
            Map.entry("transcripts/index.json", "de71a0d0a50231c358dd1702607805a447ee210589703d5c7f1a4fd71016a98a"),
            Map.entry("transcripts/LICENSE-tau-bench.txt", "243d23d45b80122b5ac575586ccef352fdc9c45e6d7d2605449aca8a17478b42"));

    /** {@link #aggregateSha256} of the corpus files index.json gives no sha256 for (the rejected ones). */
    private static final String REJECTED_CORPUS_SHA256 =
            "09bdac40868a724b78ae9900bddcdb14eb4b164b596b824a8547532073237d0b";

    /** {@link #aggregateSha256} of the v1alpha3 corpus files its index gives no sha256 for (the rejected ones). */
    private static final String REJECTED_V1ALPHA3_CORPUS_SHA256 =
            "3d57beb50a6d570dbda4fdbb9c01064b748dff6e64160ed79a1e5164353a1f7b";

    private static final String LICENCE = "transcripts/LICENSE-tau-bench.txt";

    @Test
    void specDir_isTheInRepositoryCopy() {
        Path dir = SpecFiles.specDir();
        assertThat(dir.getFileName()).hasToString("spec-kit");
        assertThat(dir.resolve("README.md")).isRegularFile();
        assertThat(dir.resolve("../pom.xml")).as("spec-kit/ sits at the repository root").isRegularFile();
    }

    @Test
    void vectors_allFivePresentWithTheKitsDigests() throws IOException {
        assertThat(listing("vectors")).containsExactly(
                "envelope.json", "mac-input.json", "plan-identity.json", "record.json", "run-subkey.json");
        List<String> failures = new ArrayList<>();
        PINNED.keySet().stream().filter(f -> f.startsWith("vectors/")).sorted().forEach(f -> checkPinned(f, failures));
        assertThat(failures).isEmpty();
    }

    @Test
    void vectorsV1alpha3_allFourPresentWithTheKitsDigests_andNothingElse() throws IOException {
        assertThat(listing("vectors-v1alpha3")).containsExactly(
                "envelope.json", "mac-input.json", "plan-identity.json", "record.json");
        List<String> failures = new ArrayList<>();
        PINNED.keySet().stream().filter(f -> f.startsWith("vectors-v1alpha3/")).sorted().forEach(f -> checkPinned(f, failures));
        assertThat(failures).isEmpty();
    }

    @Test
    void corpusV1alpha3_everyIndexedFilePresentWithItsDigest_andNothingElse() throws IOException {
        List<String> failures = new ArrayList<>();
        checkPinned("payload-corpus/v1alpha3/index.json", failures);
        Indexed indexed = checkIndexed("payload-corpus/v1alpha3", failures);
        assertThat(failures).isEmpty();
        assertThat(indexed.files()).hasSize(51);
        // The index gives digests for the valid files only; the 33 rejected ones are pinned as one.
        assertThat(indexed.undigested()).hasSize(33).allMatch(f -> f.startsWith("invalid-"));
        assertThat(aggregateSha256("payload-corpus/v1alpha3", indexed.undigested()))
                .as("digest of the v1alpha3 corpus files without an indexed sha256").isEqualTo(REJECTED_V1ALPHA3_CORPUS_SHA256);
        Set<String> expected = new TreeSet<>(indexed.files());
        expected.add("index.json");
        assertThat(listing("payload-corpus/v1alpha3")).containsExactlyElementsOf(expected);
    }

    @Test
    void corpusDirectories_areExactlyTheTwoCopied() throws IOException {
        assertThat(listing("payload-corpus")).containsExactly("public", "v1alpha3");
    }

    @Test
    void corpus_everyIndexedFilePresentWithItsDigest_andNothingElse() throws IOException {
        List<String> failures = new ArrayList<>();
        checkPinned("payload-corpus/public/index.json", failures);
        Indexed indexed = checkIndexed("payload-corpus/public", failures);
        assertThat(failures).isEmpty();
        assertThat(indexed.files()).hasSize(51);
        // The index gives digests for the valid files only; the 46 rejected ones are pinned as one.
        assertThat(indexed.undigested()).hasSize(46).allMatch(f -> f.startsWith("invalid-"));
        assertThat(aggregateSha256("payload-corpus/public", indexed.undigested()))
                .as("digest of the corpus files without an indexed sha256").isEqualTo(REJECTED_CORPUS_SHA256);
        Set<String> expected = new TreeSet<>(indexed.files());
        expected.add("index.json");
        assertThat(listing("payload-corpus/public")).containsExactlyElementsOf(expected);
    }

    @Test
    void transcripts_all100IndexedFilesPresentWithTheirDigests_licenceBeside_andNothingElse() throws IOException {
        List<String> failures = new ArrayList<>();
        checkPinned("transcripts/index.json", failures);
        checkPinned(LICENCE, failures);
        Indexed indexed = checkIndexed("transcripts", failures);
        assertThat(failures).isEmpty();
        assertThat(indexed.undigested()).as("transcripts without an indexed sha256").isEmpty();
        assertThat(indexed.files()).hasSize(100).allMatch(f -> f.matches("tau-airline-\\d{3}\\.json"));
        Set<String> expected = new TreeSet<>(indexed.files());
        expected.add("index.json");
        expected.add("LICENSE-tau-bench.txt");
        assertThat(listing("transcripts")).containsExactlyElementsOf(expected);
    }

    @Test
    void licence_isTauBenchsMitLicence() {
        String text = new String(SpecFiles.bytes(LICENCE), StandardCharsets.UTF_8);
        assertThat(text).startsWith("MIT License").contains("Copyright (c) 2024 Sierra");
    }

    @Test
    void locate_unsetOrMissing_failsNamingTheInRepositoryPath(@TempDir Path tmp) {
        assertThatThrownBy(() -> SpecFiles.locate(null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("spec-kit/ at the repository root")
                .hasMessageContaining("-Dspice.spec.dir=");
        assertThatThrownBy(() -> SpecFiles.locate(" "))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("spec-kit/ at the repository root");
        Path missing = tmp.resolve("spec-kit");
        assertThatThrownBy(() -> SpecFiles.locate(missing.toString()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("spec kit not found at " + missing)
                .hasMessageContaining("spec-kit/ at the repository root");
        assertThat(SpecFiles.locate(tmp.toString())).isEqualTo(tmp.toAbsolutePath().normalize());
    }

    /** The file names an index.json lists, and those of them it gives no sha256 for. */
    private record Indexed(Set<String> files, List<String> undigested) {}

    /**
     * Checks every case of dir/index.json: its file is present and, where the index gives a
     * sha256, has that digest.
     */
    private static Indexed checkIndexed(String dir, List<String> failures) {
        Set<String> files = new TreeSet<>();
        List<String> undigested = new ArrayList<>();
        for (JsonNode c : SpecFiles.json(dir + "/index.json").get("cases")) {
            String file = c.get("file").asText();
            if (!files.add(file)) {
                failures.add("spec-kit/" + dir + "/" + file + ": listed twice in index.json");
            }
            if (c.hasNonNull("sha256")) {
                check(dir + "/" + file, c.get("sha256").asText(), failures);
            } else if (Files.isRegularFile(SpecFiles.resolve(dir + "/" + file))) {
                undigested.add(file);
            } else {
                failures.add("spec-kit/" + dir + "/" + file + ": missing");
            }
        }
        return new Indexed(files, undigested.stream().sorted().toList());
    }

    /**
     * SHA-256 over the named files of dir in the given order, each as: name (UTF-8), NUL, length
     * in decimal ASCII, NUL, content.
     */
    private static String aggregateSha256(String dir, List<String> names) {
        MessageDigest md = sha256();
        for (String name : names) {
            byte[] bytes = SpecFiles.bytes(dir + "/" + name);
            md.update(name.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(Integer.toString(bytes.length).getBytes(StandardCharsets.US_ASCII));
            md.update((byte) 0);
            md.update(bytes);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static void checkPinned(String relative, List<String> failures) {
        check(relative, PINNED.get(relative), failures);
    }

    private static void check(String relative, String sha256, List<String> failures) {
        Path f = SpecFiles.resolve(relative);
        if (!Files.isRegularFile(f)) {
            failures.add("spec-kit/" + relative + ": missing");
            return;
        }
        String got = sha256(SpecFiles.bytes(relative));
        if (!got.equals(sha256)) {
            failures.add("spec-kit/" + relative + ": sha256 " + got + ", the kit's is " + sha256);
        }
    }

    private static List<String> listing(String dir) throws IOException {
        try (Stream<Path> s = Files.list(SpecFiles.resolve(dir))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(sha256().digest(bytes));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
