package spice.authority.snapshot.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PayloadRule;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The committed regression seeds are present and still mean what the fuzz targets assume: a
 * missing inputs directory would make regression mode silently replay only the empty input.
 */
class SeedCorpusTest {

    @Test
    void seedDirectories_arePopulated() throws Exception {
        assertThat(files("PayloadFuzzTestInputs/decode")).hasSizeGreaterThanOrEqualTo(80);
        assertThat(files("EnvelopeFuzzTestInputs/parseBinary")).hasSizeGreaterThanOrEqualTo(40);
        assertThat(files("EnvelopeFuzzTestInputs/parseJson")).hasSizeGreaterThanOrEqualTo(5);
    }

    @Test
    void sealedAndVectorSeeds_verifyWithTheFuzzKey() throws Exception {
        List<String> failures = new ArrayList<>();
        int n = 0;
        for (Path p : files("EnvelopeFuzzTestInputs/parseBinary")) {
            String name = p.getFileName().toString();
            if (!name.startsWith("sealed-") && !name.equals("vector-suspended-run-1.bin")) {
                continue;
            }
            n++;
            try {
                Envelope e = Envelope.parse(Files.readAllBytes(p));
                Envelopes.Strict s = Envelopes.validateStrict(e);
                Envelopes.verify(s.validated(), FuzzKey::verify);
            } catch (Exception ex) {
                failures.add(name + ": " + ex.getMessage());
            }
        }
        assertThat(n).isGreaterThanOrEqualTo(5);
        assertThat(failures).isEmpty();
    }

    @Test
    void nestingSeeds_straddleTheDepthLimit() throws Exception {
        Path dir = dir("PayloadFuzzTestInputs/decode");
        Snapshot s = Snapshot.decode(Files.readAllBytes(dir.resolve("nesting-at-limit.json")));
        assertThat(s.history()).hasSize(3);
        assertThatThrownBy(() -> Snapshot.decode(Files.readAllBytes(dir.resolve("nesting-over-limit.json"))))
                .isInstanceOfSatisfying(PayloadRejectedException.class,
                        e -> assertThat(e.rule()).isEqualTo(PayloadRule.P_JSON));
    }

    private static Path dir(String relative) throws URISyntaxException {
        var url = SeedCorpusTest.class.getResource(relative);
        assertThat(url).as("seed directory %s on the test class path", relative).isNotNull();
        return Path.of(url.toURI());
    }

    private static List<Path> files(String relative) throws IOException, URISyntaxException {
        try (Stream<Path> s = Files.list(dir(relative))) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }
}
