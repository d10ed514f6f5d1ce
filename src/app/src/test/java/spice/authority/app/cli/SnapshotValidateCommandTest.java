package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
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
        assertThat(r.out()).isEqualTo(f + ": OK run-1 suspended v1alpha2\n");
    }

    @Test
    void validate_v1alpha3Payload_namesItsVersion() {
        Path f = SpecFiles.resolve("payload-corpus/v1alpha3/valid-01-minimal-suspended.json");
        CliRun r = CliRun.of("snapshot", "validate", f.toString());
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).isEqualTo(f + ": OK run-1 suspended v1alpha3\n");
    }

    @Test
    void validate_badVersion_namesTheVersionText() {
        Path f = SpecFiles.resolve("payload-corpus/v1alpha3/invalid-version-v1alpha2-with-workspace.json");
        CliRun r = CliRun.of("snapshot", "validate", f.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.out()).isEqualTo(f + ": REJECTED P-VERSION version \"spice.agent.snapshot/v1alpha2\" has no "
                + "plan_identity.workspace_fingerprint (a member of a later format) (at version)\n");
        Path none = SpecFiles.resolve("payload-corpus/public/invalid-version-v1alpha1.json");
        assertThat(CliRun.of("snapshot", "validate", none.toString()).out())
                .startsWith(none + ": REJECTED P-VERSION version \"spice.agent.snapshot/v1alpha1\" is not a snapshot format");
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

    /**
     * The examples of {@code snapshot validate --help} name files of the in-repository spec kit
     * (relative to the repository root) and pass on them: each path is resolved against the root,
     * a {@code *} in a file name expanded as the shell would, and the command run in-process.
     */
    @Test
    void help_validateExamples_nameTheInRepositoryKitAndPass() throws IOException {
        CliRun help = CliRun.of("snapshot", "validate", "--help");
        List<String> examples = help.out().lines().map(String::strip)
                .filter(l -> l.startsWith("spice-authority snapshot validate ") && l.contains(" spec-kit/")).toList();
        assertThat(examples).hasSize(2);
        Path root = SpecFiles.specDir().getParent();
        for (String example : examples) {
            List<String> args = new ArrayList<>();
            List<Path> files = new ArrayList<>();
            for (String word : example.substring("spice-authority ".length()).split(" +")) {
                if (word.startsWith("spec-kit/")) {
                    List<Path> matched = expand(root, word);
                    assertThat(matched).as(word).isNotEmpty();
                    matched.forEach(f -> args.add(f.toString()));
                    files.addAll(matched);
                } else {
                    args.add(word);
                }
            }
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(example + "\n" + r.out() + r.err()).isZero();
            if (args.contains("--json")) {
                JsonNode arr = new ObjectMapper().readTree(r.out());
                assertThat(arr).hasSize(files.size());
                arr.forEach(v -> assertThat(v.get("verdict").asText()).isEqualTo("OK"));
            } else {
                assertThat(r.out().lines()).hasSize(files.size()).allMatch(l -> l.contains(": OK "));
            }
        }
        assertThat(examples.get(1)).contains("--json").contains("spec-kit/transcripts/tau-*.json");
    }

    /** A path relative to the repository root; a '*' in its last name is expanded like the shell's glob. */
    private static List<Path> expand(Path root, String relative) throws IOException {
        Path p = root.resolve(relative);
        String name = p.getFileName().toString();
        if (!name.contains("*")) {
            return Files.exists(p) ? List.of(p) : List.of();
        }
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + name);
        try (Stream<Path> s = Files.list(p.getParent())) {
            return s.filter(f -> m.matches(f.getFileName())).sorted().toList();
        }
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
