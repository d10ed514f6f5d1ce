package spice.authority.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Port squatting on loopback TCP: another local process holds the helper's port (while the helper
 * is not running) and records every byte it receives. Whatever it answers to the endpoint proof,
 * the client refuses it, and the squatter never receives the token or the request body. The
 * control case (a squatter that does hold the token) shows the recording would catch them.
 */
class TcpSquatterTest {
    private static final String TOKEN = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2";
    private static final String BODY = "{\"conversation\":\"SECRET-AGENT-CONVERSATION\"}";
    private static final String PROOF_REQUEST = "GET /v1/endpoint-proof?nonce=";
    private static final Pattern NONCE = Pattern.compile("GET /v1/endpoint-proof\\?nonce=([0-9a-f]{64}) HTTP/1.1\r\n");

    /** What the squatter does with the first request on a connection. */
    enum Mode { WRONG_PROOF, PROOF_OF_ANOTHER_TOKEN, NO_PROOF_FIELD, NOT_FOUND, UNAUTHORIZED, CLOSE, SILENT, UNFRAMED,
        CONNECTION_CLOSE, NOT_HTTP, HOLDER, RELAY, DRIP }

    /** A plain ServerSocket on a loopback port that records every byte of every connection. */
    private static final class Squatter implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final Mode mode;
        final ByteArrayOutputStream recorded = new ByteArrayOutputStream();
        final Semaphore closedConnections = new Semaphore(0);
        final List<Socket> open = new ArrayList<>();
        final Thread thread;
        /** RELAY: the port of the real helper the proof request is passed to. */
        final int relayTo;

        Squatter(Mode mode) throws IOException {
            this(mode, -1);
        }

        Squatter(Mode mode, int relayTo) throws IOException {
            this.mode = mode;
            this.relayTo = relayTo;
            this.thread = Thread.ofPlatform().daemon().name("squatter").start(this::run);
        }

        int port() {
            return server.getLocalPort();
        }

        synchronized String recorded() {
            return recorded.toString(StandardCharsets.ISO_8859_1);
        }

        private void run() {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    synchronized (this) {
                        open.add(s);
                    }
                    serve(s);
                } catch (IOException e) {
                    // the connection ended (or the squatter was closed)
                } finally {
                    closedConnections.release();
                }
            }
        }

        private void serve(Socket s) throws IOException {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            String head = readHead(in);
            switch (mode) {
                case CLOSE -> {
                    return;
                }
                case SILENT -> { }
                case WRONG_PROOF -> out.write(json(200, "{\"proof\":\"" + "0".repeat(64) + "\"}", ""));
                case PROOF_OF_ANOTHER_TOKEN -> out.write(json(200, "{\"proof\":\""
                        + proof("not-the-token".getBytes(StandardCharsets.US_ASCII), head, s) + "\"}", ""));
                case NO_PROOF_FIELD -> out.write(json(200, "{\"status\":\"ok\"}", ""));
                case NOT_FOUND -> out.write(json(404, "{\"code\":\"not_found\"}", ""));
                case UNAUTHORIZED -> out.write(json(401, "{\"code\":\"unauthorized\"}", ""));
                case UNFRAMED -> out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"proof\":\""
                        + "0".repeat(64) + "\"}").getBytes(StandardCharsets.ISO_8859_1));
                case CONNECTION_CLOSE -> out.write(json(200, "{\"proof\":\"" + "0".repeat(64) + "\"}", "Connection: close\r\n"));
                case NOT_HTTP -> out.write("SSH-2.0-OpenSSH_9.6\r\n".getBytes(StandardCharsets.ISO_8859_1));
                case DRIP -> {
                    // Slowloris: a byte of an endless header every 100 ms, well inside the read timeout.
                    out.write("HTTP/1.1 200 OK\r\nX-Pad: ".getBytes(StandardCharsets.ISO_8859_1));
                    while (true) {
                        out.flush();
                        try {
                            Thread.sleep(100); // the subject: a slowloris, each byte within the read timeout
                        } catch (InterruptedException e) {
                            return;
                        }
                        out.write('a'); // fails once the client has closed the connection
                    }
                }
                case RELAY -> {
                    // A man in the middle: the proof request goes to the real helper on its own
                    // port, and its answer, byte for byte, back to the client.
                    try (Socket helper = new Socket(InetAddress.getLoopbackAddress(), relayTo)) {
                        helper.setSoTimeout(5_000);
                        helper.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
                        InputStream h = helper.getInputStream();
                        String answer = readHead(h, false);
                        Matcher m = Pattern.compile("(?i)content-length: *(\\d+)").matcher(answer);
                        assertThat(m.find()).as(answer).isTrue();
                        out.write(answer.getBytes(StandardCharsets.ISO_8859_1));
                        out.write(h.readNBytes(Integer.parseInt(m.group(1))));
                    }
                }
                case HOLDER -> {
                    out.write(json(200, "{\"proof\":\"" + proof(TOKEN.getBytes(StandardCharsets.US_ASCII), head, s) + "\"}", ""));
                    readHead(in);
                    out.write(json(200, "[]", "Connection: close\r\n"));
                }
            }
            out.flush();
            // Record whatever else the client sends until it closes the connection.
            while (true) {
                int b = in.read();
                if (b < 0) {
                    return;
                }
                record(b);
            }
        }

        private synchronized void record(int b) {
            recorded.write(b);
        }

        private String readHead(InputStream in) throws IOException {
            return readHead(in, true);
        }

        private String readHead(InputStream in, boolean record) throws IOException {
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("eof");
                }
                if (record) {
                    record(b);
                }
                head.append((char) b);
            }
            return head.toString();
        }

        private static String proof(byte[] token, String head, Socket s) {
            Matcher m = NONCE.matcher(head);
            if (!m.lookingAt()) {
                return "0".repeat(64);
            }
            return HexFormat.of().formatHex(FakeHelper.mac(token, HexFormat.of().parseHex(m.group(1)),
                    (java.net.InetSocketAddress) s.getLocalSocketAddress()));
        }

        private static byte[] json(int status, String body, String extraHeaders) {
            return ("HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\n" + extraHeaders + "Content-Length: "
                    + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.ISO_8859_1);
        }

        /** Waits until the client has closed {@code n} connections (the squatter read their ends). */
        void awaitClosed(int n) throws InterruptedException {
            assertThat(closedConnections.tryAcquire(n, 10, TimeUnit.SECONDS)).as("the client closed its connection").isTrue();
        }

        @Override
        public void close() throws Exception {
            server.close();
            synchronized (this) {
                for (Socket s : open) {
                    s.close();
                }
            }
            thread.join(5_000);
        }
    }

    private static HttpTransport client(int port, Path tmp) throws IOException {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        return new HttpTransport(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), port, tokenFile),
                TokenReader.ownerOnly(), "test-host", Duration.ofSeconds(5), Duration.ofMillis(500));
    }

    private static Throwable signAgainst(Squatter s, Path tmp) throws IOException {
        HttpTransport c = client(s.port(), tmp);
        return catchThrowable(() -> c.send("POST", "/v1/runs/run-1/snapshots", Map.of("Spice-Session", "s3ss10n"),
                BODY.getBytes(StandardCharsets.UTF_8)));
    }

    private static void assertRefusedAndNothingSent(Mode mode, String reason, Path tmp) throws Exception {
        try (Squatter s = new Squatter(mode)) {
            Throwable t = signAgainst(s, tmp);
            s.awaitClosed(1);
            assertThat(t).as(mode.name()).isInstanceOf(HelperUntrusted.class)
                    .hasMessageStartingWith("refused: the server at http://127.0.0.1:" + s.port()
                            + " did not prove it holds the helper's token (")
                    .hasMessageContaining(reason)
                    .hasMessageContaining("nothing was sent to it, neither the token nor the request")
                    .hasMessageNotContaining(TOKEN);
            String got = s.recorded();
            // The squatter saw the proof request (so the recording works), and nothing after it.
            assertThat(got).as(mode.name()).startsWith(PROOF_REQUEST)
                    .doesNotContain(TOKEN).doesNotContain("Authorization").doesNotContain("SECRET-AGENT-CONVERSATION")
                    .doesNotContain("/v1/runs/run-1/snapshots").doesNotContain("s3ss10n");
            assertThat(got.indexOf("\r\n\r\n")).as(mode.name() + ": one request head only").isEqualTo(got.length() - 4);
        }
    }

    @Test
    void squatter_wrongProof_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.WRONG_PROOF, "its proof is wrong", tmp);
    }

    @Test
    void squatter_proofUnderAnotherToken_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.PROOF_OF_ANOTHER_TOKEN, "its proof is wrong", tmp);
    }

    @Test
    void squatter_noProofField_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.NO_PROOF_FIELD, "its answer has no proof", tmp);
    }

    @Test
    void squatter_404_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.NOT_FOUND, "it answered HTTP 404 to the endpoint proof", tmp);
    }

    @Test
    void squatter_401_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.UNAUTHORIZED, "it answered HTTP 401 to the endpoint proof", tmp);
    }

    @Test
    void squatter_closingTheConnection_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.CLOSE, "closed the connection without a response", tmp);
    }

    @Test
    void squatter_silent_isRefusedAfterTheTimeout_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.SILENT, "no answer to the endpoint proof within 500 ms", tmp);
    }

    @Test
    void squatter_drippingItsAnswer_isRefusedWithinTheReadTimeout_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        // Each byte comes well inside the 500 ms read timeout; the whole answer may not take longer.
        java.util.concurrent.CompletableFuture<Void> done = java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                assertRefusedAndNothingSent(Mode.DRIP, "no answer to the endpoint proof within 500 ms", tmp);
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        done.get(10, TimeUnit.SECONDS);
    }

    @Test
    void squatter_answerFramedByTheEndOfTheConnection_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.UNFRAMED, "neither Content-Length nor chunked framing", tmp);
    }

    @Test
    void squatter_closingAfterTheProof_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.CONNECTION_CLOSE, "it would close the connection after the endpoint proof", tmp);
    }

    @Test
    void squatter_notHttp_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        assertRefusedAndNothingSent(Mode.NOT_HTTP, "malformed status line", tmp);
    }

    /**
     * A man in the middle: the squatter holds the client's port and passes the proof request to
     * the real helper, which listens on another port and holds the token. The helper's proof names
     * the endpoint it was reached at, not the squatter's, so the client refuses it and sends the
     * squatter nothing more. Without the endpoint in the MAC the relayed proof passed and the
     * squatter got the token and the body.
     */
    @Test
    void squatter_relayingTheProofToTheRealHelper_isRefused_andNeverGetsTokenOrBody(@TempDir Path tmp) throws Exception {
        FakeHelper helper = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "{}"));
        try (Squatter s = new Squatter(Mode.RELAY, helper.port())) {
            Throwable t = signAgainst(s, tmp);
            s.awaitClosed(1);
            assertThat(helper.proofs()).as("the real helper answered the relayed proof").isEqualTo(1);
            assertThat(t).isInstanceOf(HelperUntrusted.class).hasMessageContaining("its proof is wrong")
                    .hasMessageNotContaining(TOKEN);
            assertThat(s.recorded()).startsWith(PROOF_REQUEST).doesNotContain(TOKEN).doesNotContain("Authorization")
                    .doesNotContain("SECRET-AGENT-CONVERSATION");
        } finally {
            helper.close();
        }
    }

    @Test
    void squatter_throughAuthorityClient_isRefusedWithoutRetry_andNeverGetsTheToken(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (Squatter s = new Squatter(Mode.NOT_FOUND)) {
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), s.port(), tokenFile))
                    .timeouts(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
            assertThat(catchThrowable(c::openSession)).isInstanceOf(HelperUntrusted.class).hasMessageNotContaining(TOKEN);
            s.awaitClosed(1);
            assertThat(s.recorded()).startsWith(PROOF_REQUEST).doesNotContain(TOKEN).doesNotContain("/v1/sessions");
        }
    }

    /**
     * The control: a server that does hold the token gets the request after the proof, on the
     * same connection; so the recording above would have shown a token or a body had one been
     * sent. Every request has a fresh nonce.
     */
    @Test
    void holderOfTheToken_getsTokenAndBody_onTheProvenConnection_withAFreshNonceEachTime(@TempDir Path tmp) throws Exception {
        try (Squatter s = new Squatter(Mode.HOLDER)) {
            HttpTransport c = client(s.port(), tmp);
            HttpTransport.Response r = c.send("POST", "/v1/runs/run-1/snapshots", Map.of(), BODY.getBytes(StandardCharsets.UTF_8));
            assertThat(r.status()).isEqualTo(200);
            assertThat(c.send("GET", "/v1/runs", Map.of(), null).status()).isEqualTo(200);
            s.awaitClosed(2);
            String got = s.recorded();
            assertThat(got).contains("Authorization: Bearer " + TOKEN).contains("SECRET-AGENT-CONVERSATION");
            Matcher m = NONCE.matcher(got);
            List<String> nonces = new ArrayList<>();
            while (m.find()) {
                nonces.add(m.group(1));
            }
            assertThat(nonces).hasSize(2).doesNotHaveDuplicates();
            // Each connection carried the proof request first, then the request.
            assertThat(got.indexOf("POST /v1/runs/run-1/snapshots")).isGreaterThan(got.indexOf(PROOF_REQUEST));
        }
    }
}
