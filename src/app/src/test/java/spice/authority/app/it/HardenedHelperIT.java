package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged helper as a hostile or unlucky host meets it, with real processes, sockets,
 * signals and resource limits: paths that are not UTF-8, logs written without a UTF-8 locale, a
 * descriptor limit lowered while it runs, and SIGTERM while slow bodies are in flight.
 */
class HardenedHelperIT {
    private Path root;
    private HelperProcess helper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-hardened-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    private void startHelper(List<String> prefix) throws IOException {
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"), List.of(), prefix);
    }

    private String openSession() throws IOException {
        UnixHttp.Response r = helper.http().call("POST", "/v1/sessions", Map.of(), new byte[0]);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        String t = r.text();
        int at = t.indexOf("\"session\":\"") + 11;
        return t.substring(at, t.indexOf('"', at));
    }

    /** Starts {@code jsonRunId} (JSON string content, escapes as written) under {@code session}. */
    private UnixHttp.Response start(String session, String jsonRunId) throws IOException {
        return helper.http().call("POST", "/v1/runs", Map.of("Spice-Session", session, "Content-Type", "application/json"),
                ("{\"run_id\":\"" + jsonRunId + "\"}").getBytes(StandardCharsets.US_ASCII));
    }

    /** Every file of the authority directory with its bytes. */
    private Map<String, String> authorityFiles() throws IOException {
        Map<String, String> files = new TreeMap<>();
        try (var s = Files.list(root.resolve("authority"))) {
            for (Path p : s.toList()) {
                files.put(p.getFileName().toString(), Files.isRegularFile(p) ? Arrays.toString(Files.readAllBytes(p)) : "");
            }
        }
        return files;
    }

    private static long openFds(long pid) throws IOException {
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return s.count();
        }
    }

    /** Sets the soft RLIMIT_NOFILE of {@code pid} (the hard one stays, so that it can be raised again). */
    private static void prlimit(long pid, long n) throws Exception {
        Process p = new ProcessBuilder("prlimit", "--pid", Long.toString(pid), "--nofile=" + n + ":")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("prlimit: " + out).isZero();
    }

    // ---- paths that are not UTF-8 ---------------------------------------------------------------

    /** Percent-encodings that are not UTF-8: invalid, cut short, an encoded lone surrogate, overlong. */
    private static final List<String> NOT_UTF8 = List.of("%FF", "%C3", "%F0%9F", "%ED%A0%80", "%ED%B0%80", "%C0%AF",
            "%80");

    @Test
    void pathsThatAreNotUtf8_everyRouteAnswers400NamingTheRule_andNothingIsTouched() throws Exception {
        startHelper(List.of());
        String session = openSession();
        // The run the lenient decoding would have named: U+FFFD.
        assertThat(start(session, "alias-\\ufffd").status()).isEqualTo(200);
        assertThat(start(session, "job-\\u00e9").status()).isEqualTo(200);
        Map<String, String> before = authorityFiles();
        Map<String, String> auth = Map.of("Spice-Session", session, "Content-Type", "application/json");

        List<String> wrong = new ArrayList<>();
        for (String bad : NOT_UTF8) {
            String run = "/v1/runs/alias-" + bad;
            List<String[]> calls = List.of(new String[] {"DELETE", run + "/lease"}, new String[] {"GET", run},
                    new String[] {"POST", run + "/resume"}, new String[] {"POST", run + "/abandon"},
                    new String[] {"POST", run + "/snapshots"}, new String[] {"DELETE", "/v1/sessions/" + session + bad},
                    new String[] {"POST", "/v1/imports/imp" + bad + "/consume"},
                    new String[] {"POST", "/v1/imports/imp" + bad + "/activate"},
                    new String[] {"DELETE", "/v1/imports/imp" + bad});
            for (String[] c : calls) {
                // No body: the refusal comes before any body is read, and the connection is closed with it.
                UnixHttp.Response r = helper.http().call(c[0], c[1], auth, null);
                if (r.status() != 400 || !r.text().contains("\"code\":\"invalid_request\"")
                        || !r.text().contains("must be percent-encoded UTF-8")) {
                    wrong.add(c[0] + " " + c[1] + " -> " + r.status() + " " + r.text());
                }
            }
        }
        assertThat(wrong).as("answers other than 400 invalid_request naming the rule").isEmpty();

        // Nothing was touched: the run alias-U+FFFD is still held by its session, and no file changed.
        assertThat(authorityFiles()).isEqualTo(before);
        UnixHttp.Response view = helper.http().get("/v1/runs/alias-%EF%BF%BD");
        assertThat(view.text()).isEqualTo("{\"run_id\":\"alias-\uFFFD\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":true}");
        // A path in UTF-8 names the run a body with the same bytes names, percent-encoded or raw.
        assertThat(helper.http().get("/v1/runs/job-%C3%A9").text()).contains("\"run_id\":\"job-\u00e9\"");
        // The session itself still works: it releases its lease through the correctly encoded path.
        assertThat(helper.http().call("DELETE", "/v1/runs/alias-%EF%BF%BD/lease", auth, null).status()).isEqualTo(204);
        assertThat(helper.http().get("/v1/runs/alias-%EF%BF%BD").text()).contains("\"owned\":false");
    }

    // ---- logs without a UTF-8 locale ------------------------------------------------------------

    @Test
    void logsWithoutAUtf8Locale_twoNonAsciiRunIds_logAsDifferentAsciiText() throws Exception {
        // env -i: no LANG, no LC_*: the JVM writes standard error in ASCII (anything else as '?').
        startHelper(List.of("env", "-i"));
        String session = openSession();
        assertThat(start(session, "job-\\u00e9").status()).isEqualTo(200); // Latin e with acute
        assertThat(start(session, "job-\\u0430").status()).isEqualTo(200); // Cyrillic a
        String e = "run job-\\u00E9 started";
        String a = "run job-\\u0430 started";
        // The log is read by another thread.
        String log = Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20), helper::stderr,
                l -> l.contains(e) && l.contains(a));
        assertThat(log).as("the log").contains(e).contains(a).doesNotContain("job-?");
        assertThat(helper.stop()).isZero();
    }

    // ---- the descriptor limit, lowered while the helper runs ------------------------------------

    @Test
    void descriptorLimitLoweredWhileRunning_reserveFollowsIt_andRaisedAgain_admitsAgain() throws Exception {
        startHelper(List.of());
        long pid = helper.process.pid();
        String session = openSession();
        assertThat(start(session, "run-first").status()).isEqualTo(200);

        // Lower the limit to a few descriptors above what is open now: fewer than the reserve (64) remain.
        long open = openFds(pid);
        prlimit(pid, open + 24);
        // Polled, not hammered: each admitted start takes a lock descriptor below the new limit.
        int[] i = {0};
        UnixHttp.Response refused = Poll.until(java.time.Duration.ofSeconds(5), java.time.Duration.ofMillis(100), () -> {
            UnixHttp.Response r = start(session, "run-low-" + i[0]++);
            assertThat(r.status()).as(r.text()).isIn(200, 429);
            return r;
        }, r -> r.status() == 429);
        assertThat(refused.status()).as("a start refused once the limit was lowered").isEqualTo(429);
        assertThat(refused.text()).contains("\"code\":\"busy\"").contains("spice.authority.fd-reserve")
                .contains("of its " + (open + 24) + " descriptors are in use");

        // Raised again: admitted again.
        prlimit(pid, open + 1024);
        UnixHttp.Response admitted = Poll.until(java.time.Duration.ofSeconds(5), java.time.Duration.ofMillis(100),
                () -> start(session, "run-high-" + System.nanoTime()), r -> r.status() == 200);
        assertThat(admitted.status()).as("a start admitted once the limit was raised").isEqualTo(200);
    }

    // ---- SIGTERM with slow bodies in flight -----------------------------------------------------

    private long activeRequests() throws IOException {
        for (String line : helper.http().get("/q/metrics").text().split("\n")) {
            if (line.startsWith("http_server_active_requests ")) {
                return Long.parseLong(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        return -1;
    }

    @Test
    void sigtermWithSlowBodiesInFlight_exitsZeroWithinTwelveSeconds() throws Exception {
        startHelper(List.of());
        String session = openSession();
        List<SocketChannel> slow = new ArrayList<>();
        try {
            // Headers and a few bytes of each body, then nothing: they would hold until the body timeout (30 s).
            String[] paths = {"/v1/sessions", "/v1/runs", "/v1/runs/slow-1/snapshots", "/v1/imports", "/v1/runs/slow-2/resume"};
            for (String path : paths) {
                SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(helper.socket));
                slow.add(ch);
                OutputStream out = Channels.newOutputStream(ch);
                out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nSpice-Session: " + session
                        + "\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"ru").getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20), this::activeRequests,
                    n -> n >= paths.length);
            assertThat(activeRequests()).as("the slow requests are in flight").isGreaterThanOrEqualTo(paths.length);

            long t0 = System.nanoTime();
            helper.process.destroy(); // SIGTERM
            boolean exited = helper.process.waitFor(30, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("HardenedHelperIT: SIGTERM with %d slow bodies in flight: exit in %d ms%n", paths.length, ms);
            assertThat(exited).as("exited").isTrue();
            assertThat(helper.process.exitValue()).isZero();
            assertThat(ms).as("SIGTERM to exit (ms)").isLessThan(12_000);
            assertThat(Files.exists(helper.socket)).as("socket removed").isFalse();
        } finally {
            for (SocketChannel ch : slow) {
                ch.close();
            }
        }
    }
}
