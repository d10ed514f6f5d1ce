package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;

/**
 * End to end with real processes: the packaged helper, and test hosts that are separate JVMs
 * with their own sessions (issue 5, "Show").
 */
class HelperEndToEndIT {
    private Path root;
    private HelperProcess helper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-e2e-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        // The helper's java.io.tmpdir: it should leave nothing there (no Vert.x file cache, no native library copy).
        Files.createDirectory(root.resolve("java-tmp"));
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"),
                List.of("-Djava.io.tmpdir=" + root.resolve("java-tmp")));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    private Path payload(String runId, String status, long seq) throws IOException {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        String json = base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"status\":\"suspended\"", "\"status\":\"" + status + "\"")
                .replace("\"last_sequence\":7", "\"last_sequence\":" + seq);
        Path f = root.resolve(runId + "-" + status + "-" + seq + ".json");
        Files.writeString(f, json);
        return f;
    }

    private static String importId(String answer) {
        return answer.replaceAll(".*\"import\":\"([0-9a-f]+)\".*", "$1");
    }

    private String owned(String runId) throws IOException {
        return helper.http().get("/v1/runs/" + runId).text();
    }

    @Test
    void fullLifecycle_acrossHostProcesses() throws Exception {
        assertThat(helper.listeningLine).isEqualTo("listening on unix:" + root.resolve("endpoint/authority.sock"));
        Path env1 = root.resolve("env1.pb");
        try (HostProcess host1 = new HostProcess(helper.socket); HostProcess host2 = new HostProcess(helper.socket);
             HostProcess host3 = new HostProcess(helper.socket)) {
            assertThat(host1.send("session")).startsWith("200 ");
            assertThat(host2.send("session")).startsWith("200 ");
            assertThat(host3.send("session")).startsWith("200 ");
            assertThat(host1.send("start run-e2e")).startsWith("200 ").contains("\"phase\":\"ACTIVE\"");
            assertThat(host1.send("sign run-e2e " + payload("run-e2e", "suspended", 7) + " " + env1)).startsWith("200 envelope");

            // A second host's import is busy while the first lives; it cannot touch the first's run either.
            assertThat(host2.send("import " + env1)).startsWith("409 ").contains("\"code\":\"busy\"");
            assertThat(host2.send("resume run-e2e")).startsWith("409 ").contains("not owned by this session");

            // The first host dies; the helper notices promptly and releases its lease.
            host1.kill9();
            assertThat(Poll.until(java.time.Duration.ofSeconds(5), java.time.Duration.ofMillis(20), () -> owned("run-e2e"),
                    r -> !r.contains("\"owned\":true"))).contains("\"phase\":\"SUSPENDED\"").contains("\"owned\":false");

            String prepared = host2.send("import " + env1);
            assertThat(prepared).startsWith("200 ").contains("\"run_id\":\"run-e2e\"").contains("\"last_sequence\":7")
                    .contains("\"next_sequence\":8");
            String aborted = importId(prepared);
            // The answer to a prepare can be lost: the same session preparing the identical envelope
            // again gets the import it holds, not busy; another session's import stays busy.
            assertThat(importId(host2.send("import " + env1))).isEqualTo(aborted);
            assertThat(host3.send("import " + env1)).startsWith("409 ").contains("\"code\":\"busy\"");
            // An aborted import is never handed out again: the next prepare is a new import.
            assertThat(host2.send("abort " + aborted)).startsWith("204");
            String imp = importId(host2.send("import " + env1));
            assertThat(imp).isNotEqualTo(aborted);
            assertThat(host2.send("consume " + imp)).startsWith("200 ").contains("IMPORTING");
            // Once consumed, the import is not handed out again: the envelope no longer verifies.
            assertThat(host2.send("import " + env1)).startsWith("403 ").contains("verification_failed");
            assertThat(host2.send("activate " + imp)).startsWith("200 ").contains("\"phase\":\"ACTIVE\"").contains("\"run_generation\":2");
            assertThat(owned("run-e2e")).contains("\"owned\":true");

            // A third host's import of the same envelope is refused.
            assertThat(host3.send("import " + env1)).startsWith("403 ").contains("verification_failed");

            // Local suspend then resume: the envelope of that suspension never imports.
            Path env2 = root.resolve("env2.pb");
            assertThat(host2.send("sign run-e2e " + payload("run-e2e", "suspended", 9) + " " + env2)).startsWith("200 envelope");
            assertThat(host2.send("resume run-e2e")).startsWith("200 ").contains("\"run_generation\":3");
            assertThat(host2.send("release run-e2e")).startsWith("204");
            assertThat(host3.send("import " + env2)).startsWith("403 ").contains("verification_failed");

            // A terminal snapshot tombstones the run: inspectable, never importable.
            Path env3 = root.resolve("env3.pb");
            assertThat(host3.send("start run-term")).startsWith("200 ");
            assertThat(host3.send("sign run-term " + payload("run-term", "completed", 11) + " " + env3)).startsWith("200 envelope");
            assertThat(owned("run-term")).contains("\"phase\":\"COMPLETED\"").contains("\"owned\":false");
            UnixHttp.Response inspect = helper.http().call("POST", "/v1/snapshots/inspect",
                    Map.of("Content-Type", "application/x-protobuf"), Files.readAllBytes(env3));
            assertThat(inspect.status()).isEqualTo(200);
            assertThat(inspect.text()).contains("\"lifecycle\" : \"SNAPSHOT_LIFECYCLE_COMPLETED\"").contains("\"resumable\" : false");
            assertThat(host2.send("import " + env3)).startsWith("403 ");
        }
    }

    /**
     * The largest payload the rules allow in its most expensive shape (4,096 messages of 128
     * one-character text parts, 14.3 MB) is signed under the launcher's heap (128 MiB): it decodes
     * to about six times its size. Under the old 96 MiB heap, and before the canonical check
     * compared as it encoded, this answered 500 (OutOfMemoryError) although every rule passes.
     */
    @Test
    void largestPayloadOfTinyParts_isSigned() throws Exception {
        Path payload = largestPayloadOfTinyParts("run-max");
        Path env = root.resolve("max.pb");
        try (HostProcess host = new HostProcess(helper.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            assertThat(host.send("start run-max")).startsWith("200 ");
            assertThat(host.send("sign run-max " + payload + " " + env)).startsWith("200 envelope");
        }
        assertThat(Files.size(env)).isGreaterThan(Files.size(payload));
        // Issued again, as JSON, to a session that does not own the run (its answer was "lost"):
        // 19 MB of base64, streamed into one array (JsonFormat alone needed ~5 times that).
        UnixHttp.Response session = helper.http().call("POST", "/v1/sessions", Map.of(), new byte[0]);
        assertThat(session.status()).isEqualTo(200);
        String id = session.text().replaceAll(".*\"session\":\"([0-9a-f]+)\".*", "$1");
        UnixHttp.Response json = helper.http().call("POST", "/v1/runs/run-max/snapshots",
                Map.of("Spice-Session", id, "Accept", "application/json",
                        "Content-Type", "application/vnd.spice.snapshot.v1alpha2+json"), Files.readAllBytes(payload));
        assertThat(json.status()).as(json.text().length() < 400 ? json.text() : "").isEqualTo(200);
        assertThat(json.body().length).isGreaterThan(19_000_000);
        assertThat(json.text()).startsWith("{\n  \"format\": ").contains("\"runId\": \"run-max\"");
        assertThat(helper.stderr()).doesNotContain("OutOfMemoryError");
    }

    /**
     * A helper without the memory to decode a payload says so with "nothing was written, retry"
     * (503), never "uncertain": the decode runs before any lease is touched, and the run stays
     * ACTIVE, owned and not fenced. (A 40 MiB heap: the 14.3 MB payload cannot be decoded.)
     */
    @Test
    void payloadTooLargeForTheHeapNow_unavailableNothingWritten_runNotFenced() throws Exception {
        Path payload = largestPayloadOfTinyParts("run-small");
        Path dir = Files.createDirectory(root.resolve("small-heap"));
        try (HelperProcess small = HelperProcess.start(dir.resolve("authority"), dir.resolve("endpoint/authority.sock"),
                     List.of("-Xmx40m"));
             HostProcess host = new HostProcess(small.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            assertThat(host.send("start run-small")).startsWith("200 ");

            String answer = host.send("sign run-small " + payload + " " + root.resolve("small.pb"));

            assertThat(answer).startsWith("503 ").contains("\"code\":\"unavailable\"").contains("nothing was");
            String run = small.http().get("/v1/runs/run-small").text();
            assertThat(run).contains("\"phase\":\"ACTIVE\"").contains("\"owned\":true").doesNotContain("\"fenced\":true");
        }
    }

    /**
     * Two hosts sign payloads of tiny parts (10.7 MB each, 3,072 messages) at once: together
     * within the body budget, but decoding each takes about six times its size, more than the
     * heap for both. Large bodies are decoded one at a time (LargeBodies), so both are signed;
     * decoded together, one ran out of memory.
     */
    @Test
    void twoLargeSignsAtOnce_bothSigned() throws Exception {
        Path a = payloadOfTinyParts("run-a", 3300);
        Path b = payloadOfTinyParts("run-b", 3300);
        try (HostProcess hostA = new HostProcess(helper.socket); HostProcess hostB = new HostProcess(helper.socket)) {
            assertThat(hostA.send("session")).startsWith("200 ");
            assertThat(hostB.send("session")).startsWith("200 ");
            assertThat(hostA.send("start run-a")).startsWith("200 ");
            assertThat(hostB.send("start run-b")).startsWith("200 ");
            java.util.concurrent.CompletableFuture<String> signA = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> sendQuietly(hostA, "sign run-a " + a + " " + root.resolve("a.pb")));
            java.util.concurrent.CompletableFuture<String> signB = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> sendQuietly(hostB, "sign run-b " + b + " " + root.resolve("b.pb")));
            assertThat(signA.get(120, java.util.concurrent.TimeUnit.SECONDS)).startsWith("200 envelope");
            assertThat(signB.get(120, java.util.concurrent.TimeUnit.SECONDS)).startsWith("200 envelope");
        }
        assertThat(helper.stderr()).doesNotContain("OutOfMemoryError");
    }

    private static String sendQuietly(HostProcess host, String command) {
        try {
            return host.send(command);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private Path largestPayloadOfTinyParts(String runId) throws IOException {
        Path payload = payloadOfTinyParts(runId, 4096);
        assertThat(Files.size(payload)).isGreaterThan(14_000_000);
        return payload;
    }

    /** {@code messages} messages of 128 one-character text parts: the most expensive shape to decode. */
    private Path payloadOfTinyParts(String runId, int messages) throws IOException {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        String parts = String.join(",", java.util.Collections.nCopies(128, "{\"kind\":\"text\",\"text\":\"x\"}"));
        StringBuilder history = new StringBuilder("\"history\":[");
        for (int m = 0; m < messages; m++) {
            history.append(m == 0 ? "" : ",").append("{\"id\":\"m").append(m).append("\",\"role\":\"user\",\"parts\":[")
                    .append(parts).append("]}");
        }
        String json = base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"history\":[{\"id\":\"input-1\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}]",
                        history.append("]").toString());
        Path payload = root.resolve(runId + ".json");
        Files.writeString(payload, json, StandardCharsets.UTF_8);
        return payload;
    }

    @Test
    void envelopeFromAnotherHelper_failsWithTheSameBodyAsAForgedMac() throws Exception {
        Path envA = root.resolve("a.pb");
        Path envB = root.resolve("b.pb");
        Path otherRoot = Files.createTempDirectory("spice-e2e-other-");
        try (HelperProcess other = HelperProcess.start(otherRoot.resolve("authority"), otherRoot.resolve("endpoint/authority.sock"));
             HostProcess hostA = new HostProcess(helper.socket); HostProcess hostB = new HostProcess(other.socket)) {
            assertThat(hostA.send("session")).startsWith("200");
            assertThat(hostB.send("session")).startsWith("200");
            assertThat(hostA.send("start run-x")).startsWith("200");
            assertThat(hostA.send("sign run-x " + payload("run-x", "suspended", 7) + " " + envA)).startsWith("200");
            assertThat(hostA.send("release run-x")).startsWith("204");
            assertThat(hostB.send("start run-x")).startsWith("200");
            assertThat(hostB.send("sign run-x " + payload("run-x", "suspended", 7) + " " + envB)).startsWith("200");

            byte[] forged = Files.readAllBytes(envA);
            forged[forged.length - 1] ^= 0x01; // last byte of the claim MAC
            Path envForged = root.resolve("forged.pb");
            Files.write(envForged, forged);
            String fromOther = hostA.send("import " + envB);
            String forgedMac = hostA.send("import " + envForged);
            assertThat(fromOther).startsWith("403 ");
            assertThat(fromOther).isEqualTo(forgedMac);
            assertThat(hostA.send("import " + envA)).startsWith("200");
        } finally {
            HelperProcess.deleteTree(otherRoot);
        }
    }

    @Test
    void oversizedBodies_refusedFromContentLengthBeforeTheBodyIsRead() throws Exception {
        for (String path : List.of("/v1/runs/r/snapshots", "/v1/imports", "/v1/sessions")) {
            try (java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(
                    java.net.UnixDomainSocketAddress.of(helper.socket))) {
                String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                        + "Content-Type: application/x-protobuf\r\nContent-Length: 20000000\r\n\r\n";
                ch.write(java.nio.ByteBuffer.wrap(head.getBytes(StandardCharsets.US_ASCII)));
                // No body is sent: the answer must come from the headers alone.
                UnixHttp.Response r = UnixHttp.parse(java.nio.channels.Channels.newInputStream(ch));
                assertThat(r.status()).as(path).isEqualTo(413);
                assertThat(r.text()).contains("\"code\":\"invalid_request\"").contains("larger than");
            }
        }
    }

    @Test
    void secondHelperOnTheSameDirectory_refusesWithAClearMessage() throws Exception {
        Process p = new ProcessBuilder(HelperProcess.command("serve", "--authority-dir", root.resolve("authority").toString(),
                "--socket", root.resolve("endpoint2/authority.sock").toString())).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).isEqualTo(1);
        assertThat(output).contains("refused to start: another spice-authority helper is already serving " + root.resolve("authority"));
        assertThat(Files.exists(root.resolve("endpoint2/authority.sock"))).isFalse();
    }

    /**
     * The token's directory is opened by the platform provider with the authority directory's rules
     * (here 0700 and ours; on Windows the same DACL rules): a widened one refuses the start, and no
     * token and no identity.key are written.
     */
    @Test
    void tokenDirectoryFailingTheDirectoryRules_refusesTheStart() throws Exception {
        Path other = root.resolve("other-authority");
        Path wide = Files.createDirectory(root.resolve("wide"));
        Files.setPosixFilePermissions(wide, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Process p = new ProcessBuilder(HelperProcess.command("serve", "--authority-dir", other.toString(), "--listen",
                "127.0.0.1:0", "--token-file", wide.resolve("token").toString())).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(output).isEqualTo(1);
        assertThat(output).contains("refused to start: " + wide + ": MODE");
        assertThat(Files.exists(wide.resolve("token"))).as("no token written").isFalse();
        assertThat(Files.exists(other.resolve("identity.key"))).as("no identity.key after a refused start").isFalse();
    }

    @Test
    void endpointInsideTheAuthorityDirectory_orOnAnAuthorityName_isRefused() throws Exception {
        Path other = root.resolve("other-authority");
        for (List<String> args : List.of(
                List.of("serve", "--authority-dir", other.toString(), "--socket", other.resolve("authority.sock").toString()),
                // inside the authority directory
                List.of("serve", "--authority-dir", other.toString(), "--socket", other.resolve("ep/x.sock").toString()),
                List.of("serve", "--authority-dir", other.toString(), "--socket", root.resolve("ep3/identity.key").toString()),
                List.of("serve", "--authority-dir", other.toString(), "--listen", "127.0.0.1:0", "--token-file",
                        root.resolve("ep4/run-x.state").toString()))) {
            Process p = new ProcessBuilder(HelperProcess.command(args.toArray(String[]::new))).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as(output).isEqualTo(1);
            assertThat(output).containsAnyOf("must be apart from the authority directory", "reserved for authority files");
        }
        // A port already in use is refused before the authority is opened too.
        try (java.net.ServerSocket busy = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Process p = new ProcessBuilder(HelperProcess.command("serve", "--authority-dir", other.toString(), "--listen",
                    "127.0.0.1:" + busy.getLocalPort(), "--token-file", root.resolve("ep5/token").toString()))
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as(output).isEqualTo(1);
            assertThat(output).contains("cannot listen on 127.0.0.1:" + busy.getLocalPort());
            assertThat(Files.exists(root.resolve("ep5/token"))).as("no token file either").isFalse();
        }
        // Everything about the endpoint is checked before the authority is opened: a refused
        // start creates no identity.key.
        assertThat(Files.exists(other.resolve("identity.key"))).as("no identity.key after a refused start").isFalse();
    }

    @Test
    void otherUser_isUnauthorized_byPeerCredentials() throws Exception {
        if (!Files.isExecutable(Path.of("/usr/bin/setpriv")) || !"root".equals(System.getProperty("user.name"))) {
            System.out.println("skipped: needs root and setpriv to act as another uid");
            return;
        }
        // uid 4711 keeps CAP_DAC_OVERRIDE only to reach the 0700 endpoint directory: the helper's own
        // check of the peer's uid must refuse it, on the API and on every /q route alike.
        for (String path : List.of("/v1/authority", "/q/health/live", "/q/health/ready", "/q/health/started", "/q/health",
                "/q/metrics", "/q/openapi", "//q/metrics", "/q/../q/metrics")) {
            String out = curlAsOtherUser("--path-as-is", "http://localhost" + path);
            assertThat(out).as(path).contains("\"status\":401").contains("\"code\":\"unauthorized\"")
                    .contains("user id differs").doesNotContain("scope_id").doesNotContain("UP")
                    .doesNotContain("spice_authority").doesNotContain("openapi");
        }
        assertThat(curlAsOtherUser("-I", "http://localhost/q/metrics")).as("HEAD").startsWith("HTTP/1.1 401");
        assertThat(curlAsOtherUser("-i", "-X", "OPTIONS", "http://localhost/q/metrics")).as("OPTIONS").startsWith("HTTP/1.1 401");
        // A malformed escape is refused by the HTTP decoder before any route or filter runs.
        assertThat(curlAsOtherUser("-i", "--path-as-is", "http://localhost/%zz")).startsWith("HTTP/1.1 400")
                .endsWith("\r\n\r\n");
        assertThat(helper.http().get("/%zz").status()).isEqualTo(400);
    }

    private String curlAsOtherUser(String... curlArgs) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("setpriv", "--reuid=4711", "--regid=4711", "--clear-groups",
                "--inh-caps=+dac_override", "--ambient-caps=+dac_override", "curl", "-s", "--max-time", "10",
                "--unix-socket", helper.socket.toString()));
        cmd.addAll(List.of(curlArgs));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    /** The count of {@code spice_authority_refusals_total{code}} on the helper's metrics, 0 when absent. */
    private long refusals(String code) throws IOException {
        String prefix = "spice_authority_refusals_total{code=\"" + code + "\"} ";
        return helper.http().get("/q/metrics").text().lines().filter(l -> l.startsWith(prefix))
                .mapToLong(l -> Long.parseLong(l.substring(prefix.length()).trim())).sum();
    }

    @Test
    void refusals_ofTheTransportAndOfTheSessionFilter_areCountedOnce() throws Exception {
        UnixHttp http = helper.http();
        long invalid = refusals("invalid_request");
        long unauthorized = refusals("unauthorized");

        // Refused by the transport layer while the body arrives, before any resource runs.
        UnixHttp.Response tooLarge = http.call("POST", "/v1/runs", Map.of("Content-Type", "application/json"), new byte[70_000]);
        assertThat(tooLarge.status()).isEqualTo(413);
        assertThat(tooLarge.header("Content-Type")).startsWith("application/problem+json");
        assertThat(tooLarge.text()).contains("\"code\":\"invalid_request\"");
        assertThat(refusals("invalid_request")).as("the transport's refusal is counted").isEqualTo(invalid + 1);

        // Refused by the session filter before the resource method runs: no session, an unknown one.
        UnixHttp.Response noSession = http.call("POST", "/v1/runs", Map.of("Content-Type", "application/json"),
                "{\"run_id\":\"run-x\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(noSession.status()).isEqualTo(400);
        assertThat(noSession.text()).contains("Spice-Session");
        UnixHttp.Response abandonWithout = http.call("POST", "/v1/runs/run-x/abandon", Map.of(), null);
        assertThat(abandonWithout.status()).as("the operator's abandon needs a session too").isEqualTo(400);
        UnixHttp.Response unknown = http.call("DELETE", "/v1/sessions/00112233445566778899aabbccddeeff", Map.of(), null);
        assertThat(unknown.status()).isEqualTo(401);
        assertThat(unknown.text()).contains("\"code\":\"unauthorized\"").doesNotContain("00112233445566778899aabbccddeeff");
        assertThat(refusals("invalid_request")).isEqualTo(invalid + 3);
        assertThat(refusals("unauthorized")).isEqualTo(unauthorized + 1);
        assertThat(Files.exists(root.resolve("authority").resolve("run-x.json"))).as("nothing was started").isFalse();
    }

    @Test
    void healthMetricsOpenapi_andSigtermDrainsRemovesSocketExits0() throws Exception {
        UnixHttp http = helper.http();
        assertThat(http.get("/q/health/live").text()).isEqualTo("{\"status\":\"UP\",\"checks\":[]}");
        assertThat(http.get("/q/health/ready").text()).isEqualTo("{\"status\":\"UP\",\"checks\":[{\"name\":\"authority\","
                + "\"status\":\"UP\",\"data\":{\"state\":\"open\"}},{\"name\":\"store\",\"status\":\"UP\"},"
                + "{\"name\":\"process-watcher\",\"status\":\"UP\"}]}");
        for (String path : List.of("/q/health/live", "/q/metrics")) {
            Process head = new ProcessBuilder("curl", "-s", "-I", "--max-time", "10", "--unix-socket", helper.socket.toString(),
                    "http://localhost" + path).redirectErrorStream(true).start();
            String out = new String(head.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            head.waitFor();
            assertThat(out).as("HEAD " + path).startsWith("HTTP/1.1 200");
        }
        String openapi = http.get("/q/openapi").text();
        for (String path : List.of("/v1/sessions", "/v1/runs", "/v1/runs/{run_id}/snapshots", "/v1/imports",
                "/v1/imports/{import}/consume", "/v1/runs/{run_id}/abandon", "/v1/snapshots/inspect")) {
            assertThat(openapi).contains(path);
        }
        assertThat(openapi).contains("verification_failed").contains("invalid_snapshot");
        try (HostProcess host = new HostProcess(helper.socket)) {
            host.send("session");
            host.send("start run-m");
            assertThat(host.send("sign run-m " + root.resolve("nope.json") + " x")).isNotNull();
        } catch (IOException expected) {
            // the host fails reading a missing file; the metrics below still count the start
        }
        String metrics = http.get("/q/metrics").text();
        assertThat(metrics).contains("spice_authority_transitions_total").contains("kind=\"start\"")
                .contains("# TYPE http_server_requests_seconds summary")
                .contains("http_server_requests_seconds_count{method=\"POST\",outcome=\"SUCCESS\",status=\"200\",uri=\"/v1/runs\"} 1")
                .contains("spice_authority_sessions_opened_total 1");
        assertThat(metrics).doesNotContainPattern("[0-9a-f]{64}");
        try (var entries = Files.list(root.resolve("java-tmp"))) {
            assertThat(entries.map(p -> p.getFileName().toString()).toList()).doesNotContain("vertx-cache");
        }
        assertThat(helper.stop()).isZero();
        try (var entries = Files.list(root.resolve("java-tmp"))) {
            assertThat(entries.toList()).as("left in java.io.tmpdir").isEmpty();
        }
        assertThat(Files.exists(helper.socket)).isFalse();
    }
}
