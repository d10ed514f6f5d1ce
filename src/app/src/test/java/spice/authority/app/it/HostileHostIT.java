package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;

/**
 * A hostile host of the same user against the packaged helper, with real processes (issue 11):
 * descriptor exhaustion must never cost a live host its lease, bodies are bounded as they arrive,
 * and nothing it does leaves the helper unable to stop.
 */
class HostileHostIT {
    private Path root;
    private HelperProcess helper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-hostile-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    private void startHelper(List<String> prefix, String... jvmOptions) throws IOException {
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"), List.of(jvmOptions), prefix);
    }

    private Path payload(String runId) throws IOException {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        Path f = root.resolve(runId + ".json");
        Files.writeString(f, base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\""));
        return f;
    }

    private static long openFds(long pid) throws IOException {
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return s.count();
        }
    }

    @Test
    void descriptorExhaustion_liveVictimKeepsItsSessionAndLease_importOfItsRunIsBusy() throws Exception {
        // A low descriptor limit, so that the attacker reaches it quickly.
        startHelper(List.of("prlimit", "--nofile=400:400"), "-XX:-MaxFDLimit");
        long baseline = openFds(helper.process.pid());
        Path env = root.resolve("victim.pb");
        try (HostProcess victim = new HostProcess(helper.socket); HostProcess attacker = new HostProcess(helper.socket)) {
            assertThat(victim.send("session")).startsWith("200 ");
            assertThat(victim.send("start run-victim")).startsWith("200 ");
            assertThat(victim.send("sign run-victim " + payload("run-victim") + " " + env)).startsWith("200 envelope");

            // The attacker takes every lease it is allowed...
            assertThat(attacker.send("session")).startsWith("200 ");
            String starts = attacker.send("starts grab 400");
            System.out.printf("HostileHostIT: helper fds %d at start, %d after the attacker's starts: %s%n", baseline,
                    openFds(helper.process.pid()), starts);
            assertThat(starts).as("the attacker is refused before the helper runs out").contains("429=")
                    .contains("\"code\":\"busy\"").contains("spice.authority.fd-reserve");
            // ...and holds as many connections as it can.
            List<SocketChannel> held = new ArrayList<>();
            int refused = 0;
            try {
                for (int i = 0; i < 40; i++) {
                    SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(helper.socket));
                    held.add(ch);
                    UnixHttp.Response r = keepAliveGet(ch, "/q/health/live");
                    if (r.status() == 429) {
                        refused++;
                        assertThat(r.text()).contains("spice.authority.max-connections-per-process");
                    }
                }
                assertThat(refused).as("connections past the per-process quota are refused").isEqualTo(40 - 32);

                // The live victim (another process) keeps its session and its lease: its identical
                // suspend is answered.
                assertThat(victim.send("sign run-victim " + payload("run-victim") + " " + env)).startsWith("200 envelope");
                // The attacker cannot take the victim's run.
                assertThat(attacker.send("import " + env)).contains("\"code\":\"busy\"");
            } finally {
                for (SocketChannel ch : held) {
                    ch.close();
                }
            }
            // The helper noticed the closed connections: this process is within its quota again.
            int live = Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20), () -> {
                try {
                    return helper.http().get("/q/health/live").status();
                } catch (IOException e) {
                    return 0;
                }
            }, s -> s == 200);
            assertThat(live).as("served once the helper noticed the closed connections").isEqualTo(200);
            assertThat(helper.http().get("/v1/runs/run-victim").text()).contains("\"owned\":true")
                    .contains("\"phase\":\"SUSPENDED\"");
            assertThat(victim.send("resume run-victim")).startsWith("200 ").contains("\"run_generation\":2");
            // While the victim lives (its lease is released, rightly, once it exits below).
            assertThat(helper.stderr()).doesNotContain("run run-victim released");
        }
        long t0 = System.nanoTime();
        assertThat(helper.stop()).isZero();
        assertThat((System.nanoTime() - t0) / 1_000_000).as("SIGTERM exits promptly (ms)").isLessThan(5_000);
    }

    /** One request on an open connection, keeping it open (unless the helper closes it). */
    private static UnixHttp.Response keepAliveGet(SocketChannel ch, String path) throws IOException {
        OutputStream out = Channels.newOutputStream(ch);
        out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return UnixHttp.parse(Channels.newInputStream(ch));
    }

    @Test
    void chunkedBodyOverAControlLimit_refusedBeforeOneMebibyte_withAProblem_thenSigtermIsPrompt() throws Exception {
        startHelper(List.of());
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(helper.socket))) {
            OutputStream out = Channels.newOutputStream(ch);
            out.write(("POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[16 * 1024];
            java.util.Arrays.fill(chunk, (byte) ' ');
            long sent = 0;
            try {
                while (sent < 8L * 1024 * 1024) {
                    out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(chunk);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    sent += chunk.length;
                }
            } catch (IOException closedByTheHelper) {
                // the helper answered and closed the connection while we were still sending
            }
            assertThat(sent).as("the helper stopped reading before 1 MiB").isLessThan(1024 * 1024);
            UnixHttp.Response r = UnixHttp.parse(Channels.newInputStream(ch));
            assertThat(r.status()).isEqualTo(413);
            assertThat(r.header("Content-Type")).startsWith("application/problem+json");
            assertThat(r.text()).contains("\"code\":\"invalid_request\"").contains("larger than 65536 bytes for /v1/sessions");
        }
        // The refused request left no in-flight count behind: SIGTERM does not wait the drain timeout.
        long t0 = System.nanoTime();
        assertThat(helper.stop()).isZero();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("HostileHostIT: SIGTERM after a refused chunked request: exit in %d ms%n", ms);
        assertThat(ms).isLessThan(5_000);
    }

    @Test
    void fiveConcurrentSixteenMegabyteSnapshots_noServerError_noOutOfMemory_othersStillServed() throws Exception {
        startHelper(List.of());
        byte[] big = new byte[16_000_000];
        java.util.Arrays.fill(big, (byte) ' ');
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try {
            List<Future<UnixHttp.Response>> answers = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Callable<UnixHttp.Response> call = () -> helper.http().call("POST", "/v1/runs/r-" + System.nanoTime() + "/snapshots",
                        Map.of("Content-Type", "application/vnd.spice.snapshot.v1alpha2+json"), big);
                answers.add(pool.submit(call));
            }
            // Meanwhile another host is served.
            assertThat(helper.http().get("/q/health/ready").status()).isEqualTo(200);
            for (Future<UnixHttp.Response> f : answers) {
                UnixHttp.Response r;
                try {
                    r = f.get(120, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    // the helper may close a refused connection while the body is still being sent
                    assertThat(e.getCause()).isInstanceOf(IOException.class);
                    continue;
                }
                assertThat(r.status()).as(r.text()).isIn(400, 401, 503);
                assertThat(r.header("Content-Type")).startsWith("application/problem+json");
                if (r.status() == 503) {
                    assertThat(r.header("Retry-After")).isEqualTo("1");
                    assertThat(r.text()).contains("\"code\":\"unavailable\"");
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(helper.http().get("/q/health/ready").status()).isEqualTo(200);
        assertThat(helper.stderr()).doesNotContain("OutOfMemoryError");
    }

    private List<String> authorityFiles() throws IOException {
        try (var s = Files.list(root.resolve("authority"))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void runIdText_loneSurrogateRefusedBeforeAnythingIsHashed_andLogLinesEscapeLineAndBidiControls() throws Exception {
        startHelper(List.of());
        try (HostProcess host = new HostProcess(helper.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            List<String> before = authorityFiles();
            // JSON escapes, sent as written: a lone high surrogate, then a lone low one.
            for (String id : List.of("coll\\ud800", "coll\\udc00x")) {
                assertThat(host.send("start " + id)).startsWith("400 ").contains("\"code\":\"invalid_request\"");
            }
            assertThat(authorityFiles()).as("nothing created for a refused run ID").isEqualTo(before);

            // In a payload: P-RUNID, before any lease or file is looked at.
            String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
            Path bad = root.resolve("surrogate.json");
            Files.writeString(bad, base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"coll\\ud800\""));
            assertThat(host.send("sign coll " + bad + " " + root.resolve("never.pb"))).startsWith("422 ")
                    .contains("\"rule\":\"P-RUNID\"");
            assertThat(Files.exists(root.resolve("never.pb"))).isFalse();

            // Valid but invisible or line-breaking code points are escaped in the log.
            assertThat(host.send("start line\\u2028break\\u202eevil")).startsWith("200 ");
        }
        assertThat(helper.stderr()).contains("run line\\u2028break\\u202Eevil started")
                .doesNotContain("\u2028").doesNotContain("\u202e");
    }

    @Test
    void identityFileMadeWorldReadable_refusesTheNextTransition_untilRestored() throws Exception {
        startHelper(List.of());
        Path key = root.resolve("authority/identity.key");
        try (HostProcess host = new HostProcess(helper.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            assertThat(host.send("start run-a")).startsWith("200 ");
            List<String> before = authorityFiles();
            Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            String refused = host.send("start run-b");
            assertThat(refused).startsWith("503 ").contains("\"code\":\"unavailable\"")
                    .contains("identity file refused, nothing written");
            assertThat(authorityFiles()).as("nothing written").isEqualTo(before);
            assertThat(host.send("sign run-a " + payload("run-a") + " " + root.resolve("a.pb"))).startsWith("503 ");

            Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            assertThat(host.send("start run-b")).startsWith("200 ");
            assertThat(host.send("sign run-a " + payload("run-a") + " " + root.resolve("a.pb"))).startsWith("200 envelope");
        }
    }
}
