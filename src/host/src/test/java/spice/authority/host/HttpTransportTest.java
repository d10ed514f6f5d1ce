package spice.authority.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HttpTransportTest {
    private static final String TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    private static HttpTransport unix(Path socket) {
        return transport(new HelperEndpoint.Unix(socket), Duration.ofSeconds(10), Duration.ofSeconds(10));
    }

    private static HttpTransport tcp(int port, Path tokenFile) {
        return transport(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), port, tokenFile),
                Duration.ofSeconds(10), Duration.ofSeconds(10));
    }

    /** A TCP transport whose listener check is {@code check}. */
    private static HttpTransport tcpChecked(int port, Path tokenFile, TcpServerCheck check) {
        return new HttpTransport(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), port, tokenFile),
                TokenReader.ownerOnly(), check, "test-host", Duration.ofSeconds(10), Duration.ofSeconds(10));
    }

    private static HttpTransport transport(HelperEndpoint e, Duration connect, Duration read) {
        return new HttpTransport(e, TokenReader.ownerOnly(), "test-host", connect, read);
    }

    private static HttpTransport.Response get(HttpTransport t, String target) throws java.io.IOException {
        return t.send("GET", target, Map.of(), null);
    }

    private static HttpTransport.Response post(HttpTransport t, String target, String json, Map<String, String> headers)
            throws java.io.IOException {
        return t.send("POST", target, headers, json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void get_overUnixSocket_sendsHostAndConnectionClose_andReadsContentLengthBody(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.json(200, "{\"state\":\"open\"}"))) {
            HttpTransport.Response r = get(unix(sock), "/v1/authority");
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.reason()).isEqualTo("OK");
            assertThat(r.header("Content-Type")).isEqualTo("application/json");
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{\"state\":\"open\"}");
            FakeHelper.Request req = h.requests().getFirst();
            assertThat(req.line()).isEqualTo("GET /v1/authority");
            assertThat(req.header("Host")).isEqualTo("localhost");
            assertThat(req.header("Connection")).isEqualTo("close");
            assertThat(req.header("Authorization")).isNull();
            assertThat(req.header("Content-Length")).isNull();
        }
    }

    @Test
    void chunkedBody_withExtensionsAndTrailers_isReassembled(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        String body = "[" + "{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":true},".repeat(200)
                + "{\"run_id\":\"last\",\"phase\":\"SUSPENDED\",\"run_generation\":2,\"owned\":false}]";
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.chunked(200, "application/json", body, 7))) {
            HttpTransport.Response r = get(unix(sock), "/v1/runs");
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(body);
            assertThat(r.header("transfer-encoding")).isEqualTo("chunked");
        }
    }

    @Test
    void bodyWithoutLength_isReadToTheEndOfTheConnection_and204HasNoBody(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> r.method().equals("DELETE") ? FakeHelper.noContent()
                : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"x\":1}".getBytes(StandardCharsets.US_ASCII))) {
            assertThat(new String(get(unix(sock), "/v1/x").body(), StandardCharsets.UTF_8)).isEqualTo("{\"x\":1}");
            HttpTransport.Response d = unix(sock).send("DELETE", "/v1/sessions/s1", Map.of(), null);
            assertThat(d.status()).isEqualTo(204);
            assertThat(d.body()).isEmpty();
        }
    }

    @Test
    void interimResponse_isSkipped(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        byte[] interim = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] fin = FakeHelper.json(200, "{}");
        byte[] both = new byte[interim.length + fin.length];
        System.arraycopy(interim, 0, both, 0, interim.length);
        System.arraycopy(fin, 0, both, interim.length, fin.length);
        try (FakeHelper h = FakeHelper.unix(sock, r -> both)) {
            HttpTransport.Response r = get(unix(sock), "/v1/x");
            assertThat(r.status()).isEqualTo(200);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{}");
        }
    }

    @Test
    void post_sendsContentLengthJsonBodyAndHeaders_andEmptyPostHasContentLengthZero(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.json(200, "{}"))) {
            post(unix(sock), "/v1/sessions", "{\"pid\":42}", Map.of());
            post(unix(sock), "/v1/runs/r/abandon", null, Map.of("Spice-Session", "s-1"));
            FakeHelper.Request open = h.requests().get(0);
            assertThat(open.line()).isEqualTo("POST /v1/sessions");
            assertThat(open.header("Content-Type")).isEqualTo("application/json");
            assertThat(open.header("Content-Length")).isEqualTo("10");
            assertThat(open.bodyText()).isEqualTo("{\"pid\":42}");
            FakeHelper.Request abandon = h.requests().get(1);
            assertThat(abandon.header("Content-Length")).isEqualTo("0");
            assertThat(abandon.header("Content-Type")).isNull();
            assertThat(abandon.header("Spice-Session")).isEqualTo("s-1");
        }
    }

    @Test
    void tcp_sendsTheBearerTokenFromTheTokenFile(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN + "\n");
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "[]"))) {
            HttpTransport c = tcp(h.port(), tokenFile);
            assertThat(get(c, "/v1/runs").status()).isEqualTo(200);
            FakeHelper.Request req = h.requests().getFirst();
            assertThat(req.header("Authorization")).isEqualTo("Bearer " + TOKEN);
            assertThat(req.header("Host")).isEqualTo("localhost");
            // SECURITY: the request went on the connection whose server answered the proof.
            assertThat(h.proofs()).isEqualTo(1);
            assertThat(h.connections()).isEqualTo(1);
        }
    }

    @Test
    void tokenFile_missing_isNotRunning_andBadContentIsRefusedWithoutShowingIt(@TempDir Path tmp) throws Exception {
        HttpTransport missing = tcp(1, tmp.resolve("none"));
        assertThatThrownBy(() -> get(missing, "/v1/runs")).isInstanceOf(HelperUnreachable.class)
                .hasMessageContaining("no token file");
        Path bad = tmp.resolve("bad");
        FakeHelper.writeToken(bad, "secret-part\r\nInjected: yes");
        HttpTransport c = tcp(1, bad);
        assertThatThrownBy(() -> get(c, "/v1/runs")).hasMessageContaining("not a token")
                .hasMessageNotContaining("secret").hasMessageNotContaining("Injected");
    }

    @Test
    void missingSocket_staleSocketFile_andClosedTcpPort_areNotRunning(@TempDir Path tmp) throws Exception {
        assertThatThrownBy(() -> get(unix(tmp.resolve("none.sock")), "/v1/authority"))
                .isInstanceOf(HelperUnreachable.class).hasMessageContaining("none.sock");
        Path stale = tmp.resolve("stale.sock");
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(stale));
        }
        assertThat(stale).exists();
        assertThatThrownBy(() -> get(unix(stale), "/v1/authority"))
                .isInstanceOf(HelperUnreachable.class).hasMessageContaining("connection refused");
        int port;
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            port = ((InetSocketAddress) s.getLocalAddress()).getPort();
        }
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        HttpTransport c = tcp(port, tokenFile);
        assertThatThrownBy(() -> get(c, "/v1/authority")).isInstanceOf(HelperUnreachable.class)
                .hasMessageNotContaining(TOKEN);
    }

    @Test
    void silentHelper_timesOut(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        CountDownLatch release = new CountDownLatch(1);
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        })) {
            HttpTransport c = transport(new HelperEndpoint.Unix(sock), Duration.ofSeconds(1), Duration.ofMillis(300));
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> get(c, "/v1/authority")).isInstanceOf(HelperTimeout.class)
                    .hasMessageContaining("timed out");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
            release.countDown();
        }
    }

    /**
     * A helper that drips its answer a byte at a time, each within the read timeout, is cut off at
     * the exchange's deadline (12 read timeouts), not held forever.
     */
    @Test
    void drippingHelper_isCutAtTheExchangeDeadline(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(sock));
            Thread drip = Thread.ofPlatform().daemon().start(() -> {
                try (java.nio.channels.SocketChannel ch = server.accept()) {
                    java.nio.ByteBuffer in = java.nio.ByteBuffer.allocate(4096);
                    while (ch.read(in) > 0 && !new String(in.array(), 0, in.position(), StandardCharsets.US_ASCII).contains("\r\n\r\n")) {
                        // the request head
                    }
                    ch.write(java.nio.ByteBuffer.wrap("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
                    for (int i = 0; i < 100_000; i++) {
                        ch.write(java.nio.ByteBuffer.wrap(new byte[] {'x'}));
                        Thread.sleep(50); // the subject: a slow helper, each byte within the read timeout
                    }
                } catch (java.io.IOException | InterruptedException e) {
                    // the client went away
                }
            });
            HttpTransport c = transport(new HelperEndpoint.Unix(sock), Duration.ofSeconds(1), Duration.ofMillis(200));
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> get(c, "/v1/runs")).isInstanceOf(HelperTimeout.class).hasMessageContaining("timed out");
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(2000)).isLessThan(Duration.ofSeconds(6));
            drip.interrupt();
        }
    }

    /**
     * A helper that refuses a body before reading it all (its budget: 503, connection closed) makes
     * the client's write fail (EPIPE); the answer it sent first is the outcome, not an unknown one.
     */
    @Test
    void answerBeforeTheBodyWasRead_isTheOutcome_notTheWritesFailure(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        byte[] refusal = FakeHelper.problem(503, "unavailable", "request bodies held at once are over the budget; nothing was done");
        try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(sock));
            Thread helper = Thread.ofPlatform().daemon().start(() -> {
                try (java.nio.channels.SocketChannel ch = server.accept()) {
                    java.nio.ByteBuffer in = java.nio.ByteBuffer.allocate(4096);
                    while (!new String(in.array(), 0, in.position(), StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
                        if (ch.read(in) < 0) {
                            return;
                        }
                    }
                    java.nio.ByteBuffer out = java.nio.ByteBuffer.wrap(refusal);
                    while (out.hasRemaining()) {
                        ch.write(out);
                    }
                } catch (java.io.IOException e) {
                    // the client went away
                }
            });
            HttpTransport c = transport(new HelperEndpoint.Unix(sock), Duration.ofSeconds(1), Duration.ofSeconds(5));

            HttpTransport.Response r = c.send("POST", "/v1/runs/r/snapshots", Map.of("Content-Type", "application/json"),
                    new byte[16 << 20]);

            assertThat(r.status()).isEqualTo(503);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("\"code\":\"unavailable\"");
            helper.join(5000);
        }
    }

    /** A declared Content-Length is not allocated before the bytes come: 8 MB declared, 10 sent, then the end. */
    @Test
    void declaredLength_isNotAllocatedUpFront(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        byte[] answer = "HTTP/1.1 200 OK\r\nContent-Length: 8000000\r\n\r\n0123456789".getBytes(StandardCharsets.US_ASCII);
        try (FakeHelper h = FakeHelper.unix(sock, r -> answer)) {
            HttpTransport c = transport(new HelperEndpoint.Unix(sock), Duration.ofSeconds(1), Duration.ofSeconds(5));
            com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            assertThatThrownBy(() -> get(c, "/v1/runs")).isInstanceOf(HelperProtocolError.class); // warm-up
            long before = threads.getThreadAllocatedBytes(Thread.currentThread().threadId());
            assertThatThrownBy(() -> get(c, "/v1/runs")).isInstanceOf(HelperProtocolError.class)
                    .hasMessageContaining("closed the connection mid-response");
            long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().threadId()) - before;
            assertThat(allocated).as("bytes allocated").isLessThan(1_000_000);
        }
    }

    /** The bound on an answer is the call's: 10 MiB is too large for a document, not for an envelope. */
    @Test
    void answerBound_isTheCalls(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        String big = "x".repeat(10 << 20);
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.raw(200, "application/x-protobuf", big))) {
            HttpTransport c = transport(new HelperEndpoint.Unix(sock), Duration.ofSeconds(1), Duration.ofSeconds(10));
            assertThatThrownBy(() -> get(c, "/v1/runs")).isInstanceOf(HelperProtocolError.class).hasMessageContaining("larger than");
            HttpTransport.Response r = c.send("POST", "/v1/runs/r/snapshots", Map.of(), new byte[] {1},
                    spice.authority.snapshot.envelope.Envelope.MAX_ENCODED_BYTES);
            assertThat(r.body()).hasSize(10 << 20);
        }
    }

    /**
     * An interrupt while waiting for the helper (a host cancelling the call, an executor shutting
     * down) ends the wait at once with an InterruptedIOException and keeps the interrupt status;
     * it neither spins on the selector nor waits out the read timeout.
     */
    @Test
    void interruptWhileWaiting_endsTheCallPromptly_keepsTheInterrupt(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch received = new CountDownLatch(1);
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            received.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        })) {
            HttpTransport c = transport(new HelperEndpoint.Unix(sock), Duration.ofSeconds(1), Duration.ofSeconds(8));
            java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean stillInterrupted = new java.util.concurrent.atomic.AtomicBoolean();
            Thread caller = Thread.ofPlatform().start(() -> {
                try {
                    get(c, "/v1/authority");
                } catch (Throwable e) {
                    failure.set(e);
                }
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            assertThat(received.await(5, TimeUnit.SECONDS)).isTrue();
            Waits.awaitIn(caller, HttpTransport.class.getName(), "await"); // the caller waits for the answer now
            long cpu0 = threadCpu(caller);
            long t0 = System.nanoTime();
            caller.interrupt();
            caller.join(10_000);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            release.countDown();
            assertThat(caller.isAlive()).isFalse();
            assertThat(took).as("ends at the interrupt, not at the read timeout").isLessThan(Duration.ofSeconds(2));
            assertThat(failure.get()).isInstanceOf(java.io.InterruptedIOException.class);
            assertThat(stillInterrupted).isTrue();
            if (cpu0 >= 0) {
                assertThat(Duration.ofNanos(threadCpu(caller) - cpu0)).as("no spinning").isLessThan(Duration.ofMillis(500));
            }
        }
    }

    private static long threadCpu(Thread t) {
        var bean = java.lang.management.ManagementFactory.getThreadMXBean();
        return bean.isThreadCpuTimeSupported() ? Math.max(-1, bean.getThreadCpuTime(t.threadId())) : -1;
    }

    @Test
    void malformedFraming_isAProtocolError(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("a.sock");
        String[] bad = {
            "SSH-2.0-OpenSSH\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: " + "a".repeat(70_000) + "\r\n\r\n",
            ""
        };
        for (String b : bad) {
            try (FakeHelper h = FakeHelper.unix(sock, r -> b.getBytes(StandardCharsets.ISO_8859_1))) {
                assertThatThrownBy(() -> get(unix(sock), "/v1/authority")).as(b.length() > 60 ? b.substring(0, 60) : b)
                        .isInstanceOf(HelperProtocolError.class);
            }
        }
    }

    @Test
    void requestCannotBeSplitByHeaderOrTarget() {
        HttpTransport c = unix(Path.of("/nonexistent/a.sock"));
        assertThatThrownBy(() -> post(c, "/v1/x", "{}", Map.of("Spice-Session", "a\r\nX: y")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> get(c, "/v1/x y")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> get(c, "/v1/x\n")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void segment_percentEncodesEverythingButUnreserved() {
        assertThat(HttpTransport.segment("run-1_a.b~c")).isEqualTo("run-1_a.b~c");
        assertThat(HttpTransport.segment("a/b c?d%é")).isEqualTo("a%2Fb%20c%3Fd%25%C3%A9");
    }

    @Test
    void tokenFile_readableByOthers_orALink_isRefusedWithoutReadingIt(@TempDir Path tmp) throws Exception {
        Path loose = tmp.resolve("token");
        FakeHelper.writeToken(loose, TOKEN);
        Files.setPosixFilePermissions(loose, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        HttpTransport c = tcp(1, loose);
        // Refused before anything was sent: a transport failure that says so, never a lost answer.
        assertThatThrownBy(() -> get(c, "/v1/runs")).isInstanceOf(HelperUntrusted.class)
                .hasMessageContaining("refused").hasMessageContaining("nothing was sent").hasMessageNotContaining(TOKEN);

        Path real = tmp.resolve("real");
        FakeHelper.writeToken(real, TOKEN);
        Path link = tmp.resolve("link");
        Files.createSymbolicLink(link, real);
        HttpTransport viaLink = tcp(1, link);
        assertThatThrownBy(() -> get(viaLink, "/v1/runs")).isInstanceOf(HelperUntrusted.class)
                .hasMessageContaining("refused").hasMessageNotContaining(TOKEN);
    }

    /** A listener the server check refuses gets nothing, and the caller learns that nothing was sent. */
    @Test
    void serverCheckRefusal_isUntrusted_nothingSent(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "{}"))) {
            TcpServerCheck refusing = (server, local) -> {
                throw new java.io.IOException("the port is held by uid 4712");
            };
            HttpTransport c = tcpChecked(h.port(), tokenFile, refusing);
            assertThatThrownBy(() -> post(c, "/v1/runs", "{\"run_id\":\"run-1\"}", Map.of()))
                    .isInstanceOf(HelperUntrusted.class).hasMessageContaining("uid 4712")
                    .hasMessageContaining("nothing was sent").hasMessageNotContaining(TOKEN);
            assertThat(h.requests()).isEmpty();
        }
    }

    /**
     * Any failure before the request's first byte (here a check that times out; in life no
     * descriptor left for a socket or a selector) is unreachable: nothing was sent, so the caller
     * knows the outcome, never a timeout that might have carried the request.
     */
    @Test
    void failureBeforeTheFirstByte_isUnreachable_nothingSent(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "{}"))) {
            TcpServerCheck stalls = (server, local) -> {
                throw new HelperTimeout("test: the check timed out");
            };
            HttpTransport c = tcpChecked(h.port(), tokenFile, stalls);
            assertThatThrownBy(() -> post(c, "/v1/runs", "{\"run_id\":\"run-1\"}", Map.of()))
                    .isInstanceOf(HelperUnreachable.class).hasMessageContaining("nothing was sent")
                    .hasMessageContaining("HelperTimeout");
            assertThat(h.requests()).isEmpty();
        }
    }

    @Test
    void unixSocketServedByAnotherUser_isRefusedBeforeAnyRequestIsSent(@TempDir Path tmp) throws Exception {
        if (!Files.isExecutable(Path.of("/usr/bin/setpriv")) || !"root".equals(System.getProperty("user.name"))) {
            System.out.println("skipped: needs root and setpriv to act as another uid");
            return;
        }
        // Another user's process listening at the endpoint path (it got there first).
        Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        Path dir = Files.createDirectory(tmp.resolve("other"));
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path program = dir.resolve("Listener.java");
        Files.writeString(program, """
                import java.net.*; import java.nio.*; import java.nio.channels.*;
                public class Listener {
                    public static void main(String[] a) throws Exception {
                        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                        s.bind(UnixDomainSocketAddress.of(a[0]));
                        System.out.println("ready"); System.out.flush();
                        try (SocketChannel c = s.accept()) {
                            ByteBuffer b = ByteBuffer.allocate(65536); long n = 0; int r;
                            while ((r = c.read(b)) > 0) { n += r; b.clear(); }
                            System.out.println("received " + n);
                        }
                    }
                }
                """);
        Path sockDir = Files.createDirectory(dir.resolve("ep"));
        Files.setOwner(sockDir, sockDir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("4711"));
        Path socket = sockDir.resolve("authority.sock");
        Process p = new ProcessBuilder("/usr/bin/setpriv", "--reuid=4711", "--regid=4711", "--clear-groups",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), program.toString(), socket.toString())
                .redirectError(tmp.resolve("listener.err").toFile()).start();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).as(() -> readQuietly(tmp.resolve("listener.err"))).isEqualTo("ready");
            assertThatThrownBy(() -> get(unix(socket), "/v1/authority")).hasMessageContaining("another user's process");
            assertThat(out.readLine()).isEqualTo("received 0");
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            p.destroyForcibly();
        }
    }

    private static String readQuietly(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return "";
        }
    }
}
