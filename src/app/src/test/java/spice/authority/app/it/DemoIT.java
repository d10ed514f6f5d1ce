package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import spice.authority.host.RawJson;

/**
 * {@code spice-authority demo --json}, every scenario (and the default one in v1alpha3), as a user runs it from the packaged build:
 * real host JVMs, a real SIGKILL, its own helper. Checks the JSON lines and that nothing is left.
 */
class DemoIT {
    private static final Set<String> EVENTS = Set.of("RunStarted", "TurnStarted", "ToolCallStarted", "ToolCallCompleted",
            "TurnCompleted", "RunSuspended", "Killed", "ImportPrepared", "ImportRefused", "RunResumed", "RunCompleted",
            "RunAbandoned", "DemoResult", "ApprovalRequested", "ApprovalGranted", "StoreOpened", "RecoveryDecision");

    private record Result(int exit, List<Map<String, Object>> lines, String stderr) {
        List<Map<String, Object>> of(String proc, String event) {
            return lines.stream().filter(l -> proc.equals(l.get("proc")) && event.equals(l.get("event"))).toList();
        }
    }

    private static Result demo(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(HelperProcess.command(args));
        cmd.add(cmd.indexOf("-jar") + 2, "demo");
        Path err = Files.createTempFile("demo-err", ".txt");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            java.util.concurrent.CompletableFuture<byte[]> read = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return p.getInputStream().readAllBytes();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("the demo did not end in 120 s");
            }
            byte[] out = read.get(10, TimeUnit.SECONDS);
            List<Map<String, Object>> lines = new ArrayList<>();
            for (String l : new String(out, StandardCharsets.UTF_8).split("\n")) {
                if (!l.isBlank()) {
                    lines.add(RawJson.of(l).object());
                }
            }
            return new Result(p.exitValue(), lines, Files.readString(err));
        } finally {
            Files.deleteIfExists(err);
        }
    }

    private static Set<String> demoDirs() throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("spice-authority-demo-"))
                    .collect(java.util.stream.Collectors.toSet());
        }
    }

    /** Processes of a demo still running: hosts, or a helper on a demo directory. */
    private static List<String> demoProcesses() {
        return ProcessHandle.allProcesses().map(h -> h.info().commandLine().orElse(""))
                .filter(c -> c.contains("spice.authority.host.demo.DemoHost") || c.contains("spice.authority.host.store.demo.RestartHost")
                        || c.contains("spice-authority-demo-")).toList();
    }

    private static void everyLineWellFormed(Result r) {
        for (Map<String, Object> l : r.lines) {
            assertThat(l.get("proc")).isIn("A", "B", "demo");
            assertThat(l.get("pid")).isInstanceOf(Long.class);
            assertThat(EVENTS).contains((String) l.get("event"));
            if (!Set.of("DemoResult", "Killed", "RunAbandoned", "StoreOpened").contains(l.get("event"))) {
                assertThat(l).containsKey("run_id");
            }
            if (((String) l.get("event")).startsWith("ToolCall")) {
                assertThat(l).containsKey("call_id").containsKey("seq");
            }
        }
        Map<String, Object> last = r.lines.get(r.lines.size() - 1);
        assertThat(last.get("event")).isEqualTo("DemoResult");
    }

    @Test
    void suspended_hostKilled_otherProcessResumesAtLastSequencePlusOneAndCompletes() throws Exception {
        Set<String> before = demoDirs();
        Result r = demo("--json");

        assertThat(r.exit).as(r.stderr + r.lines).isZero();
        everyLineWellFormed(r);
        assertThat(r.lines.get(r.lines.size() - 1)).containsEntry("ok", true).containsKey("kill_to_resume_ms");
        long suspended = (Long) r.of("A", "RunSuspended").get(0).get("seq");
        Map<String, Object> killed = r.of("A", "Killed").get(0);
        assertThat(killed).containsEntry("signal", "SIGKILL").containsEntry("exit_code", 137L);
        long aPid = (Long) r.of("A", "RunStarted").get(0).get("pid");
        assertThat(killed.get("pid")).isEqualTo(aPid);
        assertThat(r.of("B", "ImportPrepared").get(0)).containsEntry("seq", suspended);
        assertThat(r.of("B", "RunResumed").get(0)).containsEntry("seq", suspended + 1);
        assertThat(r.of("B", "RunStarted")).isEmpty();
        assertThat(r.of("B", "RunResumed").get(0).get("pid")).isNotEqualTo(aPid);
        assertThat(r.of("B", "TurnStarted")).extracting(l -> l.get("turn")).containsExactly(3L, 4L);
        assertThat(r.of("A", "TurnStarted")).extracting(l -> l.get("turn")).containsExactly(1L, 2L);
        assertThat(r.of("B", "RunCompleted")).hasSize(1);
        // Every tool call ran once, in one of the two processes.
        List<Object> calls = r.lines.stream().filter(l -> "ToolCallCompleted".equals(l.get("event"))).map(l -> l.get("call_id")).toList();
        assertThat(calls).doesNotHaveDuplicates().hasSize(8);
        assertThat(demoDirs()).isEqualTo(before);
        assertThat(demoProcesses()).isEmpty();
    }

    @Test
    void inFlight_hostKilledDuringMutatingCall_importRefusedToolNotRerunOperatorAbandons() throws Exception {
        Set<String> before = demoDirs();
        Result r = demo("--scenario", "in-flight", "--json");

        assertThat(r.exit).as(r.stderr + r.lines).isZero();
        everyLineWellFormed(r);
        assertThat(r.lines.get(r.lines.size() - 1)).containsEntry("ok", true);
        List<Map<String, Object>> started = r.of("A", "ToolCallStarted");
        Map<String, Object> inFlight = started.get(started.size() - 1);
        assertThat(inFlight).containsEntry("tool", "append_ledger").containsEntry("call_id", "t2-write");
        assertThat(r.of("A", "ToolCallCompleted")).extracting(l -> l.get("call_id")).doesNotContain("t2-write");
        assertThat(r.of("A", "Killed")).hasSize(1);
        assertThat(r.of("A", "Killed").get(0)).containsEntry("exit_code", 137L);
        assertThat(r.of("B", "ImportRefused").get(0)).containsEntry("code", "verification_failed");
        assertThat(r.of("B", "RunResumed")).isEmpty();
        assertThat(r.of("B", "ToolCallStarted")).isEmpty();
        assertThat(r.of("demo", "RunAbandoned").get(0)).containsEntry("phase", "CANCELLED");
        assertThat(demoDirs()).isEqualTo(before);
        assertThat(demoProcesses()).isEmpty();
    }

    /**
     * Host A keeps three runs in its store and is killed; host B gets only the store's path:
     * both suspended runs resumed exactly once and completed, the cut-off run reported with its
     * call and the abandon command, no tool effect twice. With --keep the store stays for inspect.
     */
    @Test
    void restart_hostKilled_newProcessWithOnlyTheStoreResumesEverySuspendedRunOnce() throws Exception {
        Set<String> before = demoDirs();
        Path keep = Files.createTempDirectory("restart-keep");
        try {
            Result r = demo("--scenario", "restart", "--keep", keep.resolve("kept").toString(), "--json");

            assertThat(r.exit).as(r.stderr + r.lines).isZero();
            everyLineWellFormed(r);
            Map<String, Object> result = r.lines.get(r.lines.size() - 1);
            assertThat(result).containsEntry("ok", true).containsEntry("resumed", 2L).containsEntry("completed", 2L)
                    .containsEntry("reported", 1L).containsEntry("effects_twice", 0L);
            assertThat(r.of("A", "Killed").get(0)).containsEntry("exit_code", 137L);
            assertThat(r.of("B", "StoreOpened").get(0)).containsEntry("crash_epochs", 1L);
            List<Map<String, Object>> decisions = r.of("B", "RecoveryDecision");
            assertThat(decisions).hasSize(3).allSatisfy(d -> assertThat(d).containsKeys("run_id", "reason"));
            assertThat(decisions).filteredOn(d -> "resumed".equals(d.get("outcome"))).extracting(d -> d.get("reason"))
                    .containsOnly("suspended_checkpoint").hasSize(2);
            Map<String, Object> cut = decisions.stream().filter(d -> "reported".equals(d.get("outcome"))).findFirst().orElseThrow();
            assertThat(cut).containsEntry("reason", "cut_off_tool_call").containsEntry("call_id", "t2-write")
                    .containsEntry("mutating", true);
            assertThat((String) cut.get("command")).isEqualTo("spice-authority runs abandon " + cut.get("run_id"));
            assertThat(r.of("B", "RunStarted")).isEmpty();
            assertThat(r.of("B", "RunResumed")).hasSize(2);
            assertThat(r.of("B", "ApprovalGranted")).hasSize(1);
            List<String> calls = r.lines.stream().filter(l -> "ToolCallCompleted".equals(l.get("event")))
                    .map(l -> l.get("run_id") + " " + l.get("call_id")).toList();
            assertThat(calls).doesNotHaveDuplicates();
            assertThat(Files.readAllLines(keep.resolve("kept/ledger.txt"))).doesNotHaveDuplicates().hasSize(10);

            // The kept store, as the operator reads it.
            List<String> cmd = new ArrayList<>(HelperProcess.command("host-store", "inspect",
                    keep.resolve("kept/host-store/host.db").toString(), "--json"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(new String(out, StandardCharsets.UTF_8)).isZero();
            Map<String, Object> view = RawJson.of(new String(out, StandardCharsets.UTF_8)).object();
            assertThat((List<?>) view.get("runs")).hasSize(3);
            assertThat((List<?>) view.get("crash_epochs")).hasSize(1);
            assertThat((List<?>) view.get("decisions")).hasSize(3);
            assertThat(demoDirs()).isEqualTo(before);
            assertThat(demoProcesses()).isEmpty();
        } finally {
            try (Stream<Path> w = Files.walk(keep)) {
                for (Path x : w.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(x);
                }
            }
        }
    }

    /**
     * The default scenario with v1alpha3 engines (workspace fingerprint, plan domain v3): needs a
     * helper that signs v1alpha3 payloads.
     */
    @Test
    void suspended_v1alpha3_hostKilled_otherProcessImportsTheV1alpha3EnvelopeAndCompletes() throws Exception {
        Set<String> before = demoDirs();
        Result r = demo("--format", "v1alpha3", "--json");

        assertThat(r.exit).as(r.stderr + r.lines).isZero();
        everyLineWellFormed(r);
        assertThat(r.lines.get(r.lines.size() - 1)).containsEntry("ok", true).containsEntry("format", "v1alpha3");
        long suspended = (Long) r.of("A", "RunSuspended").get(0).get("seq");
        assertThat(r.of("B", "ImportPrepared").get(0)).containsEntry("seq", suspended);
        assertThat(r.of("B", "RunResumed").get(0)).containsEntry("seq", suspended + 1);
        assertThat(r.of("B", "RunStarted")).isEmpty();
        assertThat(r.of("B", "RunCompleted")).hasSize(1);
        List<Object> calls = r.lines.stream().filter(l -> "ToolCallCompleted".equals(l.get("event"))).map(l -> l.get("call_id")).toList();
        assertThat(calls).doesNotHaveDuplicates().hasSize(8);
        assertThat(demoDirs()).isEqualTo(before);
        assertThat(demoProcesses()).isEmpty();
    }

    @Test
    void unknownFormat_isAUsageError() throws Exception {
        Result r = demo("--format", "v1alpha9");
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.stderr).contains("unknown snapshot format 'v1alpha9'");
        assertThat(r.lines).isEmpty();
    }

    @Test
    void unknownScenario_isAUsageError() throws Exception {
        Result r = demo("--scenario", "sideways");
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.stderr).contains("unknown scenario 'sideways'");
        assertThat(r.lines).isEmpty();
    }
}
