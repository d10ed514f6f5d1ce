package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.app.command.ExitCodes;
import spice.authority.host.FakeHelper;

class RunsCommandTest {
    private static final String RUNS = "[{\"run_id\":\"run-1\",\"phase\":\"SUSPENDED\",\"run_generation\":1,\"owned\":true},"
            + "{\"run_id\":\"run-longer\",\"phase\":\"ACTIVE\",\"run_generation\":12,\"owned\":false}]";
    private static final String RUN_1 = "{\"run_id\":\"run-1\",\"phase\":\"SUSPENDED\",\"run_generation\":1,\"owned\":true}";

    @TempDir
    Path tmp;

    private FakeHelper helper(Function<FakeHelper.Request, byte[]> handler) throws Exception {
        return FakeHelper.unix(tmp.resolve("authority.sock"), handler);
    }

    private String sock() {
        return tmp.resolve("authority.sock").toString();
    }

    @Test
    void list_human_printsAlignedCompactLines() throws Exception {
        try (FakeHelper h = helper(r -> FakeHelper.json(200, RUNS))) {
            CliRun r = CliRun.of("runs", "list", "--socket", sock());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).isEqualTo("""
                    run-1       SUSPENDED  generation 1   owned
                    run-longer  ACTIVE     generation 12  not owned
                    """);
            assertThat(h.requests()).extracting(FakeHelper.Request::line).containsExactly("GET /v1/runs");
        }
    }

    @Test
    void list_fencedRun_saysFenced() throws Exception {
        String runs = "[{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":false,\"fenced\":true},"
                + "{\"run_id\":\"run-2\",\"phase\":\"SUSPENDED\",\"run_generation\":1,\"owned\":true}]";
        try (FakeHelper h = helper(r -> FakeHelper.json(200, runs))) {
            CliRun r = CliRun.of("runs", "list", "--socket", sock());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).isEqualTo("""
                    run-1  ACTIVE     generation 1  not owned  fenced
                    run-2  SUSPENDED  generation 1  owned
                    """);
        }
    }

    @Test
    void list_empty_saysNoRuns_andJsonIsTheHelpersArray() throws Exception {
        try (FakeHelper h = helper(r -> FakeHelper.chunked(200, "application/json", "[]", 1))) {
            assertThat(CliRun.of("runs", "list", "--socket", sock()).out()).isEqualTo("no runs\n");
        }
        try (FakeHelper h = helper(r -> FakeHelper.chunked(200, "application/json", RUNS, 5))) {
            CliRun r = CliRun.of("runs", "list", "--json", "--socket", sock());
            assertThat(r.exitCode()).as(r.err()).isZero();
            ObjectMapper m = new ObjectMapper();
            assertThat(m.readTree(r.out())).isEqualTo(m.readTree(RUNS));
            assertThat(r.out()).contains("\n  \"run_id\" : \"run-1\",");
        }
    }

    @Test
    void show_printsOneLine_andEncodesTheRunIdInThePath() throws Exception {
        try (FakeHelper h = helper(r -> FakeHelper.json(200, RUN_1))) {
            CliRun r = CliRun.of("runs", "show", "run-1", "--socket", sock());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).isEqualTo("run-1  SUSPENDED  generation 1  owned\n");
            CliRun json = CliRun.of("runs", "show", "a/b c", "--json", "--socket", sock());
            assertThat(json.exitCode()).isZero();
            assertThat(new ObjectMapper().readTree(json.out())).isEqualTo(new ObjectMapper().readTree(RUN_1));
            assertThat(h.requests()).extracting(FakeHelper.Request::line)
                    .containsExactly("GET /v1/runs/run-1", "GET /v1/runs/a%2Fb%20c");
        }
    }

    @Test
    void show_missingRun_isExit1WithOneLine() throws Exception {
        try (FakeHelper h = helper(r -> FakeHelper.problem(404, "not_found", "no run ghost"))) {
            CliRun r = CliRun.of("runs", "show", "ghost", "--socket", sock());
            assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).isEqualTo("spice-authority: not_found: no run ghost\n");
        }
    }

    @Test
    void abandon_withoutYes_isExit2AndContactsNobody() throws Exception {
        try (FakeHelper h = helper(r -> FakeHelper.json(200, "{}"))) {
            CliRun r = CliRun.of("runs", "abandon", "run-1", "--socket", sock());
            assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).startsWith("spice-authority: 'runs abandon' is irreversible: it tombstones run run-1 as CANCELLED")
                    .contains("add --yes to confirm").contains("Try 'spice-authority runs abandon --help'");
            assertThat(h.requests()).isEmpty();
        }
    }

    @Test
    void showAndAbandon_runIdBreakingTheRule_isExit2NamingTheRule_andContactsNobody() throws Exception {
        String id96 = "r".repeat(96);
        try (FakeHelper h = helper(r -> FakeHelper.json(200, "{\"run_id\":\"" + id96 + "\",\"phase\":\"ACTIVE\","
                + "\"run_generation\":1,\"owned\":false}"))) {
            for (String bad : java.util.List.of("r".repeat(97), "\u20AC".repeat(33), "run\u00011", " run-1")) {
                for (String[] args : java.util.List.of(new String[] {"runs", "show", bad, "--socket", sock()},
                        new String[] {"runs", "abandon", bad, "--yes", "--socket", sock()})) {
                    CliRun r = CliRun.of(args);
                    assertThat(r.exitCode()).as(args[1]).isEqualTo(ExitCodes.USAGE);
                    assertThat(r.out()).isEmpty();
                    assertThat(r.err()).startsWith("spice-authority: RUN_ID is not a run ID: run_id must be a token of at most 96 "
                            + "UTF-8 bytes");
                }
            }
            assertThat(h.requests()).isEmpty();
            // 96 bytes is a run ID: asked for as usual.
            CliRun ok = CliRun.of("runs", "show", id96, "--socket", sock());
            assertThat(ok.exitCode()).as(ok.err()).isZero();
            assertThat(h.requests()).extracting(FakeHelper.Request::line).containsExactly("GET /v1/runs/" + id96);
        }
    }

    private static byte[] abandonFlow(FakeHelper.Request r, byte[] abandonAnswer) {
        return switch (r.line()) {
            case "POST /v1/sessions" -> FakeHelper.json(200, "{\"session\":\"s-7f3a\",\"pid\":1}");
            case "POST /v1/runs/run-1/abandon" -> abandonAnswer;
            case "DELETE /v1/sessions/s-7f3a" -> FakeHelper.noContent();
            default -> FakeHelper.problem(404, "not_found", "unexpected " + r.line());
        };
    }

    @Test
    void abandon_withYes_opensASession_abandonsWithTheHeader_closesTheSession_inOrder() throws Exception {
        byte[] cancelled = FakeHelper.json(200, "{\"run_id\":\"run-1\",\"phase\":\"CANCELLED\",\"run_generation\":2,\"owned\":false}");
        try (FakeHelper h = helper(r -> abandonFlow(r, cancelled))) {
            CliRun r = CliRun.of("runs", "abandon", "run-1", "--yes", "--socket", sock());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).isEqualTo("run-1  CANCELLED  generation 2  not owned\n");
            assertThat(h.requests()).extracting(FakeHelper.Request::line)
                    .containsExactly("POST /v1/sessions", "POST /v1/runs/run-1/abandon", "DELETE /v1/sessions/s-7f3a");
            FakeHelper.Request open = h.requests().get(0);
            assertThat(open.bodyText()).isEqualTo("{\"pid\":" + ProcessHandle.current().pid() + "}");
            assertThat(open.header("Content-Type")).isEqualTo("application/json");
            assertThat(open.header("Spice-Session")).isNull();
            assertThat(h.requests().get(1).header("Spice-Session")).isEqualTo("s-7f3a");
        }
    }

    @Test
    void abandon_refused_isExit1OneLine_andTheSessionIsStillClosed() throws Exception {
        byte[] busy = FakeHelper.problem(409, "busy", "run run-1 is owned by a live session");
        try (FakeHelper h = helper(r -> abandonFlow(r, busy))) {
            CliRun r = CliRun.of("runs", "abandon", "run-1", "--yes", "--socket", sock());
            assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).isEqualTo("spice-authority: busy: run run-1 is owned by a live session\n");
            assertThat(h.requests()).extracting(FakeHelper.Request::line)
                    .containsExactly("POST /v1/sessions", "POST /v1/runs/run-1/abandon", "DELETE /v1/sessions/s-7f3a");
        }
    }

    @Test
    void abandon_json_printsTheHelpersRun() throws Exception {
        String cancelled = "{\"run_id\":\"run-1\",\"phase\":\"CANCELLED\",\"run_generation\":2,\"owned\":false}";
        try (FakeHelper h = helper(r -> abandonFlow(r, FakeHelper.chunked(200, "application/json", cancelled, 3)))) {
            CliRun r = CliRun.of("runs", "abandon", "--yes", "--json", "run-1", "--socket", sock());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(new ObjectMapper().readTree(r.out())).isEqualTo(new ObjectMapper().readTree(cancelled));
        }
    }

    @Test
    void noHelper_isExit1WithHowToStartIt_forEveryRunsCommand() {
        for (String[] args : new String[][] {{"runs", "list"}, {"runs", "show", "run-1"}, {"runs", "abandon", "run-1", "--yes"}}) {
            String[] full = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.stream.Stream.of("--socket", sock()))
                    .toArray(String[]::new);
            CliRun r = CliRun.of(full);
            assertThat(r.exitCode()).as(String.join(" ", args)).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.err()).hasLineCount(1).contains("no helper is running").contains("start it with ./spice-authority serve");
        }
    }

    @Test
    void malformedAnswer_isExit1() throws Exception {
        try (FakeHelper h = helper(r -> FakeHelper.json(200, "{\"run_id\":"))) {
            CliRun r = CliRun.of("runs", "show", "run-1", "--socket", sock());
            assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.err()).isEqualTo("spice-authority: unexpected response from the helper at unix:" + sock() + ": malformed JSON\n");
        }
    }

    @Test
    void usage_missingRunIdOrUnknownSubcommand_isExit2() {
        assertThat(CliRun.of("runs", "show").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(CliRun.of("runs", "abandon", "--yes").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(CliRun.of("runs", "show", "").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(CliRun.of("runs", "frobnicate").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void help_ofEveryRunsCommand_hasAnExample() {
        for (String[] cmd : new String[][] {{"runs", "--help"}, {"runs", "list", "--help"}, {"runs", "show", "--help"},
                {"runs", "abandon", "--help"}}) {
            CliRun r = CliRun.of(cmd);
            assertThat(r.exitCode()).as(String.join(" ", cmd)).isZero();
            assertThat(r.out()).contains("Usage:").contains("Example").contains("  spice-authority runs ");
        }
        assertThat(CliRun.of("runs", "abandon", "--help").out()).contains("--yes").contains("irreversible");
        CliRun bare = CliRun.of("runs");
        assertThat(bare.exitCode()).isEqualTo(2);
        assertThat(bare.err()).contains("list").contains("show").contains("abandon");
    }
}
