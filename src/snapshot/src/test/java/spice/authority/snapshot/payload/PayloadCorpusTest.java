package spice.authority.snapshot.payload;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
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
