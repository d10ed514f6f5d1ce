package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.snapshot.SpecFiles;

class SnapshotValidateCommandTest {
    private static Path corpus(String name) {
        return SpecFiles.resolve("payload-corpus/public/" + name);
    }

    @Test
    void validate_validPayload_printsOkRunIdStatusAndExits0() {
        Path f = corpus("valid-01-minimal-suspended.json");
        CliRun r = CliRun.of("snapshot", "validate", f.toString());
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).isEqualTo(f + ": OK run-1 suspended\n");
    }

    @Test
    void validate_rejectedPayload_printsRuleIdAndExits1() {
        Path f = corpus("invalid-duplicate-call-id.json");
        CliRun r = CliRun.of("snapshot", "validate", f.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.out()).startsWith(f + ": REJECTED P-CALL-DUP ");
    }

    @Test
    void validate_wholeCorpusAndTranscriptsInOneProcess_oneLinePerFileWithIndexedVerdicts() throws IOException {
        JsonNode index = SpecFiles.json("payload-corpus/public/index.json");
        List<String> args = new ArrayList<>(List.of("snapshot", "validate"));
        List<String> expected = new ArrayList<>();
        for (JsonNode c : index.get("cases")) {
            Path f = corpus(c.get("file").asText());
            args.add(f.toString());
            expected.add(c.get("expected").asText().equals("valid") ? f + ": OK " : f + ": REJECTED " + c.get("rule").asText() + " ");
        }
        try (Stream<Path> s = Files.list(SpecFiles.resolve("transcripts"))) {
            s.filter(p -> p.getFileName().toString().startsWith("tau-")).sorted().forEach(p -> {
                args.add(p.toString());
                expected.add(p + ": OK ");
            });
        }
        CliRun r = CliRun.of(args.toArray(String[]::new));
        String[] lines = r.out().split("\n");
        assertThat(lines).hasSize(expected.size());
        for (int i = 0; i < lines.length; i++) {
            assertThat(lines[i]).startsWith(expected.get(i));
        }
        assertThat(r.exitCode()).isEqualTo(1);
    }

    @Test
    void validate_missingFile_saysUnreadableAndExits1() {
        CliRun r = CliRun.of("snapshot", "validate", "/nonexistent/payload.json");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.out()).isEqualTo("/nonexistent/payload.json: UNREADABLE no such file\n");
    }

    @Test
    void validate_oversizedFile_refusedAsPSizeWithoutParsing(@TempDir Path dir) throws IOException {
        Path big = dir.resolve("big.json");
        try (RandomAccessFile f = new RandomAccessFile(big.toFile(), "rw")) {
            f.setLength(16L * 1024 * 1024 + 1); // sparse: all zero bytes
        }
        CliRun r = CliRun.of("snapshot", "validate", big.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.out()).startsWith(big + ": REJECTED P-SIZE ");
    }

    @Test
    void validate_json_printsMachineReadableArray() throws IOException {
        Path ok = corpus("valid-03-completed-two-rounds.json");
        Path bad = corpus("invalid-status-running.json");
        CliRun r = CliRun.of("snapshot", "validate", "--json", ok.toString(), bad.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        JsonNode arr = new ObjectMapper().readTree(r.out());
        assertThat(arr).hasSize(2);
        assertThat(arr.get(0).get("verdict").asText()).isEqualTo("OK");
        assertThat(arr.get(0).get("status").asText()).isEqualTo("completed");
        assertThat(arr.get(1).get("verdict").asText()).isEqualTo("REJECTED");
        assertThat(arr.get(1).get("rule").asText()).isEqualTo("P-STATUS");
    }

    @Test
    void validate_noFiles_isUsageErrorExit2() {
        CliRun r = CliRun.of("snapshot", "validate");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("Missing required parameter").contains("--help");
    }

    @Test
    void unknownCommand_isUsageErrorExit2() {
        CliRun r = CliRun.of("frobnicate");
        assertThat(r.exitCode()).isEqualTo(2);
    }

    @Test
    void help_everyCommandHasHelpWithExamples() {
        for (String[] cmd : new String[][] {{"--help"}, {"snapshot", "--help"}, {"snapshot", "validate", "--help"}, {"snapshot", "inspect", "--help"}}) {
            CliRun r = CliRun.of(cmd);
            assertThat(r.exitCode()).isZero();
            assertThat(r.out()).contains("Usage:").contains("Example");
        }
    }
}
