package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import spice.authority.host.AuthorityClient;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SpecFiles;

/**
 * The Java host client runs the language-neutral conformance kit ({@code spec-kit/conformance/},
 * format in its README) against the packaged helper, as the Python and TypeScript runners do:
 * one dynamic test per scenario file, every call through {@link AuthorityClient}
 * ({@link ConformanceHost}); a scenario's other host processes ({@code spawn_host}) are
 * {@link ConformanceHost#main} in a JVM of their own, killed with SIGKILL by {@code kill_host}.
 */
class ConformanceIT {
    static final String FORMAT = "spice-authority-conformance/v1";
    static final Set<String> EXPECT_KEYS = Set.of("status", "code", "rule", "view", "same_as", "differs_from", "listed");
    static final Set<String> RUN_VIEW_OPS = Set.of("start", "resume", "get_run", "abandon", "consume", "activate");
    static final ObjectMapper JSON = ConformanceHost.JSON;

    private static Path root;
    private static HelperProcess helper;

    @BeforeAll
    static void startHelper() throws IOException {
        root = Files.createTempDirectory("spice-conformance-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"));
    }

    @AfterAll
    static void stopHelper() throws Exception {
        try {
            if (helper != null) {
                helper.close();
            }
        } finally {
            HelperProcess.deleteTree(root);
        }
    }

    static Path kit() {
        return SpecFiles.specDir().resolve("conformance");
    }

    static List<Path> scenarioFiles() throws IOException {
        try (Stream<Path> files = Files.list(kit().resolve("scenarios"))) {
            return files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
    }

    @TestFactory
    Stream<DynamicTest> everyScenarioPasses() throws IOException {
        List<Path> files = scenarioFiles();
        assertThat(files).hasSizeGreaterThanOrEqualTo(13);
        return files.stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            JsonNode scenario = JSON.readTree(f.toFile());
            String failure = new Runner(helper.socket, kit()).run(scenario);
            assertThat(failure).as(f.getFileName().toString()).isNull();
        }));
    }

    @Test
    void theRunnerReportsAWrongExpectation_andRefusesAnotherFormat() throws IOException {
        JsonNode wrong = JSON.readTree("""
                {"format": "spice-authority-conformance/v1", "name": "wrong", "steps": [
                  {"do": "open_session", "session": "A"},
                  {"do": "get_run", "run": "ghost", "expect": {"status": 200}}]}""");
        assertThat(new Runner(helper.socket, kit()).run(wrong)).isEqualTo("step 1 (get_run): expected HTTP 200, got HTTP 404 not_found");
        JsonNode newer = JSON.readTree("{\"format\": \"spice-authority-conformance/v2\", \"name\": \"newer\", \"steps\": []}");
        assertThat(new Runner(helper.socket, kit()).run(newer)).contains("this runner reads");
        JsonNode unknown = JSON.readTree("""
                {"format": "spice-authority-conformance/v1", "name": "unknown", "steps": [
                  {"do": "authority", "expect": {"status": 200, "headers": {}}}]}""");
        assertThat(new Runner(helper.socket, kit()).run(unknown)).contains("cannot check expect members [headers]");
        JsonNode view = JSON.readTree("""
                {"format": "spice-authority-conformance/v1", "name": "view", "steps": [
                  {"do": "open_session", "session": "A"},
                  {"do": "start", "session": "A", "run": "r1", "expect": {"status": 200, "view": {"run_generation": 2}}}]}""");
        assertThat(new Runner(helper.socket, kit()).run(view)).isEqualTo("step 1 (start): run_generation: expected 2, got 1");
    }

    /** One execution of one scenario. */
    static final class Runner {
        private final Path socket;
        private final Path kit;
        private final String prefix;
        private final Map<String, byte[]> envelopes = new HashMap<>();
        private final Map<String, String> envelopeRuns = new HashMap<>();
        private final Map<String, JsonNode> imports = new HashMap<>();
        private final Map<String, String> sessionHosts = new HashMap<>();
        private final Map<String, Agent> agents = new LinkedHashMap<>();
        private final ConformanceHost main;

        Runner(Path socket, Path kit) {
            this.socket = socket;
            this.kit = kit;
            this.prefix = "j" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
            this.main = new ConformanceHost(socket);
        }

        /** Null when the scenario passed, else {@code step N (do): why}. */
        String run(JsonNode scenario) {
            if (!FORMAT.equals(scenario.path("format").asText())) {
                return "format is " + scenario.path("format") + ", this runner reads " + FORMAT;
            }
            String name = scenario.path("name").asText();
            String runPrefix = prefix + "-" + name.substring(0, Math.min(40, name.length()));
            JsonNode steps = scenario.path("steps");
            int i = 0;
            try {
                for (; i < steps.size(); i++) {
                    String why = step(runPrefix, steps.get(i));
                    if (why != null) {
                        return "step " + i + " (" + steps.get(i).path("do").asText() + "): " + why;
                    }
                }
                return null;
            } catch (IOException | InterruptedException e) {
                return "step " + i + ": " + e;
            } finally {
                for (Agent a : agents.values()) {
                    a.closeAllAndKill();
                }
                main.closeAll();
            }
        }

        private String runId(String runPrefix, String name) {
            String id = runPrefix + "-" + name;
            if (!RunId.isValid(id) || id.getBytes(StandardCharsets.UTF_8).length > 96) {
                throw new IllegalStateException("run ID " + id + " is not a valid run ID of at most 96 bytes");
            }
            return id;
        }

        private String step(String runPrefix, JsonNode step) throws IOException, InterruptedException {
            String op = step.path("do").asText();
            JsonNode expect = step.get("expect");
            if (expect != null) {
                List<String> unknown = new ArrayList<>();
                expect.fieldNames().forEachRemaining(k -> {
                    if (!EXPECT_KEYS.contains(k)) {
                        unknown.add(k);
                    }
                });
                if (!unknown.isEmpty()) {
                    return "this runner cannot check expect members " + unknown;
                }
            }
            switch (op) {
                case "spawn_host" -> {
                    agents.put(step.path("host").asText(), new Agent(socket));
                    return null;
                }
                case "kill_host" -> {
                    Agent a = agents.remove(step.path("host").asText());
                    if (a == null) {
                        return "no host process " + step.path("host");
                    }
                    a.kill9();
                    for (JsonNode run : step.path("await_released")) {
                        String rid = runId(runPrefix, run.asText());
                        // The helper's exit watcher releases the killed host's leases.
                        ObjectNode out = Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20),
                                () -> main.execute(JSON.createObjectNode().put("do", "get_run").put("run_id", rid)),
                                o -> o.path("json").path("owned").isBoolean() && !o.path("json").path("owned").asBoolean());
                        if (!(out.path("json").path("owned").isBoolean() && !out.path("json").path("owned").asBoolean())) {
                            return "run " + run.asText() + " still owned 10 s after its host was killed: " + out;
                        }
                    }
                    return null;
                }
                default -> {
                    // resolved below
                }
            }
            ObjectNode call = JSON.createObjectNode().put("do", op);
            if (step.has("session")) {
                call.put("session", step.path("session").asText());
            }
            if (step.has("run")) {
                call.put("run_id", runId(runPrefix, step.path("run").asText()));
            }
            if (step.has("payload")) {
                byte[] raw = Files.readAllBytes(kit.resolve("payloads").resolve(step.path("payload").asText()));
                String text = new String(raw, StandardCharsets.UTF_8).replace("${run}", call.path("run_id").asText());
                call.put("payload", Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8)));
            }
            if (step.has("envelope")) {
                byte[] env = envelopes.get(step.path("envelope").asText());
                if (env == null) {
                    return "no saved envelope " + step.path("envelope");
                }
                call.put("envelope", Base64.getEncoder().encodeToString(env));
            }
            if (step.has("import")) {
                JsonNode tx = imports.get(step.path("import").asText());
                if (tx == null) {
                    return "no saved import " + step.path("import");
                }
                call.set("import", tx);
            }
            String host = "main";
            if (op.equals("open_session")) {
                host = step.path("host").asText("main");
                sessionHosts.put(step.path("session").asText(), host);
            } else if (step.has("session")) {
                host = sessionHosts.getOrDefault(step.path("session").asText(), "main");
            }
            ObjectNode out;
            if (host.equals("main")) {
                out = main.execute(call);
            } else {
                Agent a = agents.get(host);
                if (a == null) {
                    return "no host process " + host + " (spawn_host first)";
                }
                out = a.execute(call);
            }
            return check(runPrefix, step, call, out, expect);
        }

        private String check(String runPrefix, JsonNode step, ObjectNode call, ObjectNode out, JsonNode expect) {
            String op = step.path("do").asText();
            int status = out.path("status").asInt();
            String code = out.path("code").asText("");
            if (out.has("error")) {
                return "no answer: " + out.path("error").asText();
            }
            if (expect == null) {
                if (status < 200 || status >= 300) {
                    return ("expected success, got HTTP " + status + " " + code).strip();
                }
                expect = JSON.createObjectNode();
            } else if (status != expect.path("status").asInt()) {
                return ("expected HTTP " + expect.path("status").asInt() + " " + expect.path("code").asText("")).strip()
                        + (", got HTTP " + status + " " + code).stripTrailing();
            }
            if (status >= 400) {
                if (!expect.path("code").asText("").equals(code)) {
                    return "expected code " + expect.path("code") + ", got " + code;
                }
                if (expect.has("rule") && !expect.path("rule").asText().equals(out.path("rule").asText(null))) {
                    return "expected rule " + expect.path("rule") + ", got " + out.path("rule");
                }
                return null;
            }
            if (expect.has("code")) {
                return "a success cannot have a problem code: the scenario is malformed";
            }
            JsonNode body = out.get("json");
            if (RUN_VIEW_OPS.contains(op) && call.has("run_id") && body != null && body.isObject()
                    && !call.path("run_id").asText().equals(body.path("run_id").asText())) {
                return "answer names run " + body.path("run_id") + ", not " + call.path("run_id");
            }
            if (op.equals("prepare_import")) {
                String runName = envelopeRuns.get(step.path("envelope").asText());
                if (body == null || !runId(runPrefix, runName).equals(body.path("run_id").asText())) {
                    return "import of another run: " + body;
                }
            }
            if (op.equals("sign")) {
                byte[] env = Base64.getDecoder().decode(out.path("envelope").asText(""));
                if (env.length == 0) {
                    return "empty envelope";
                }
                if (expect.has("same_as") && !java.util.Arrays.equals(env, envelopes.get(expect.path("same_as").asText()))) {
                    return "envelope differs from " + expect.path("same_as");
                }
                if (expect.has("differs_from") && java.util.Arrays.equals(env, envelopes.get(expect.path("differs_from").asText()))) {
                    return "envelope equals " + expect.path("differs_from");
                }
                if (step.has("save")) {
                    envelopes.put(step.path("save").asText(), env);
                    envelopeRuns.put(step.path("save").asText(), step.path("run").asText());
                }
                return null;
            }
            if (op.equals("prepare_import") && expect.has("same_as")) {
                JsonNode saved = imports.get(expect.path("same_as").asText());
                if (saved == null || !saved.path("import").asText().equals(body.path("import").asText())) {
                    return "not the same import as " + expect.path("same_as");
                }
            }
            if (op.equals("prepare_import") && step.has("save")) {
                imports.put(step.path("save").asText(), body);
            }
            if (op.equals("list_runs")) {
                JsonNode entry = null;
                for (JsonNode r : body) {
                    if (r.path("run_id").asText().equals(call.path("run_id").asText())) {
                        entry = r;
                    }
                }
                if (expect.has("listed") && expect.path("listed").asBoolean() != (entry != null)) {
                    return "run " + (expect.path("listed").asBoolean() ? "" : "not ") + "expected in the list";
                }
                body = entry;
            }
            if (expect.has("view")) {
                return subset(expect.path("view"), body, "");
            }
            return null;
        }
    }

    /** Null when {@code got} holds {@code expected} (objects member by member, recursively), else why not. */
    static String subset(JsonNode expected, JsonNode got, String path) {
        if (expected.isObject()) {
            if (got == null || !got.isObject()) {
                return (path.isEmpty() ? "answer" : path) + ": expected an object, got " + got;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = expected.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!got.has(e.getKey())) {
                    return path + e.getKey() + ": missing (expected " + e.getValue() + ")";
                }
                String why = subset(e.getValue(), got.get(e.getKey()), path + e.getKey() + ".");
                if (why != null) {
                    return why;
                }
            }
            return null;
        }
        boolean same = got != null && (expected.isNumber() && got.isNumber()
                ? expected.isIntegralNumber() == got.isIntegralNumber() && expected.decimalValue().compareTo(got.decimalValue()) == 0
                : expected.equals(got));
        if (!same) {
            String where = path.endsWith(".") ? path.substring(0, path.length() - 1) : path;
            return (where.isEmpty() ? "value" : where) + ": expected " + expected + ", got " + got;
        }
        return null;
    }

    /** A host process of this language: {@link ConformanceHost#main} in its own JVM. */
    static final class Agent {
        private final Process process;
        private final PrintWriter in;
        private final BufferedReader out;

        Agent(Path socket) throws IOException {
            Set<String> cp = new LinkedHashSet<>();
            for (Class<?> c : new Class<?>[] {ConformanceHost.class, AuthorityClient.class, RunId.class, ObjectMapper.class,
                    JsonFactory.class, JsonAutoDetect.class, com.google.protobuf.Message.class}) {
                try {
                    cp.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
                } catch (URISyntaxException e) {
                    throw new IOException(e);
                }
            }
            process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", String.join(java.io.File.pathSeparator, cp),
                    ConformanceHost.class.getName(), socket.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        ObjectNode execute(JsonNode step) throws IOException {
            in.println(JSON.writeValueAsString(step));
            String line = out.readLine();
            if (line == null) {
                return JSON.createObjectNode().put("status", 0).put("error", "the host process ended");
            }
            return (ObjectNode) JSON.readTree(line);
        }

        /** SIGKILL ({@link Process#destroyForcibly()} on POSIX), then waits for the exit. */
        void kill9() throws InterruptedException {
            process.destroyForcibly();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("host process " + process.pid() + " did not exit after SIGKILL");
            }
            in.close();
        }

        void closeAllAndKill() {
            try {
                if (process.isAlive()) {
                    execute(JSON.createObjectNode().put("do", "close_all"));
                }
            } catch (IOException ignored) {
                // the process is gone: its sessions ended with it
            }
            try {
                kill9();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
