package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RetryPolicy;
import spice.authority.host.RunView;
import spice.authority.host.Session;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.contract.RunPhase;

/**
 * The packaged helper on loopback TCP ({@code serve --listen}): it answers the endpoint proof
 * without the token (and only that route), refuses a bad nonce, never shows the token, and the
 * host library and the CLI, which now prove the server before they send the token, still work.
 */
class TcpEndpointProofIT {
    private Path root;
    private Path tokenFile;
    private HelperProcess helper;
    private String token;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-tcp-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        tokenFile = root.resolve("endpoint/token");
        helper = HelperProcess.startTcp(root.resolve("authority"), tokenFile);
        token = Files.readString(tokenFile).trim();
        assertThat(token).isNotEmpty();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
            // SECURITY: the helper's log never shows the token, whatever it was asked.
            assertThat(helper.stderr()).doesNotContain(token);
        }
        HelperProcess.deleteTree(root);
    }

    /** One raw request with {@code Connection: close}; the whole answer, head and body. */
    private String raw(String method, String target, String extraHeaders) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), helper.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write((method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + extraHeaders + "\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    /** The proof computed here, apart from the helper: for the nonce and the helper's own 127.0.0.1:port. */
    private String mac(String token, byte[] nonce) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(token.getBytes(StandardCharsets.US_ASCII), "HmacSHA256"));
        mac.update("spice-authority endpoint proof v2".getBytes(StandardCharsets.US_ASCII));
        mac.update((byte) 0);
        mac.update(nonce);
        mac.update(new byte[] {4, 127, 0, 0, 1});
        return HexFormat.of().formatHex(mac.doFinal(new byte[] {(byte) (helper.port() >> 8), (byte) helper.port()}));
    }

    private static byte[] nonce() {
        byte[] n = new byte[32];
        new SecureRandom().nextBytes(n);
        return n;
    }

    @Test
    void proof_withoutToken_isTheMacOfTheNonceUnderTheToken_andNeverTheToken() throws Exception {
        byte[] nonce = nonce();
        String answer = raw("GET", "/v1/endpoint-proof?nonce=" + HexFormat.of().formatHex(nonce), "");
        assertThat(answer).startsWith("HTTP/1.1 200 ").contains("application/json")
                .contains("\r\n{\"proof\":\"" + mac(token, nonce) + "\"}\r\n").doesNotContain(token);
        // A wrong token does not matter to this route either (it is not checked here).
        assertThat(raw("GET", "/v1/endpoint-proof?nonce=" + HexFormat.of().formatHex(nonce), "Authorization: Bearer nope\r\n"))
                .startsWith("HTTP/1.1 200 ").contains(mac(token, nonce));
    }

    @Test
    void proof_badNonce_is400InvalidRequest_andNeverShowsTheToken() throws Exception {
        String good = "ab".repeat(32);
        for (String query : List.of("", "?nonce=", "?nonce=" + good.substring(1), "?nonce=" + good + "a",
                "?nonce=" + good.toUpperCase(), "?nonce=" + "g".repeat(64), "?nonce=" + good + "&nonce=" + good,
                "?nonce=" + "ab".repeat(31) + "%20a", "?other=" + good)) {
            String answer = raw("GET", "/v1/endpoint-proof" + query, "");
            assertThat(answer).as(query).startsWith("HTTP/1.1 400 ").contains("application/problem+json")
                    .contains("\"code\":\"invalid_request\"").contains("nonce must be exactly 64 lowercase hex digits")
                    .doesNotContain(token).doesNotContain("\"proof\"");
        }
    }

    @Test
    void onlyExactlyGetEndpointProof_isAnsweredWithoutTheToken() throws Exception {
        String nonce = HexFormat.of().formatHex(nonce());
        for (String[] request : new String[][] {
                {"POST", "/v1/endpoint-proof?nonce=" + nonce},
                {"HEAD", "/v1/endpoint-proof?nonce=" + nonce},
                {"GET", "/v1/endpoint-proof/?nonce=" + nonce},
                {"GET", "/v1//endpoint-proof?nonce=" + nonce},
                {"GET", "/v1/x/../endpoint-proof?nonce=" + nonce},
                {"GET", "/v1/authority"},
                {"GET", "/q/metrics"}}) {
            String answer = raw(request[0], request[1], "");
            assertThat(answer).as(request[0] + " " + request[1]).startsWith("HTTP/1.1 401 ").doesNotContain(token);
            if (!request[0].equals("HEAD")) {
                assertThat(answer).contains("\"code\":\"unauthorized\"").contains("missing or wrong bearer token");
            }
        }
        assertThat(raw("GET", "/v1/authority", "Authorization: Bearer " + token + "\r\n")).startsWith("HTTP/1.1 200 ");
    }

    @Test
    void hostLibrary_overTcp_provesTheHelperAndRunsALifecycle() throws Exception {
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), helper.port(), tokenFile))
                .retry(RetryPolicy.DEFAULT).build();
        Session s = client.openSession();
        assertThat(s.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(client.start(s, "run-tcp")).isEqualTo(new RunView("run-tcp", RunPhase.ACTIVE, 1, true, false));
        String payload = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8)
                .replace("\"run_id\":\"run-1\"", "\"run_id\":\"run-tcp\"");
        byte[] envelope = client.sign(s, "run-tcp", payload.getBytes(StandardCharsets.UTF_8));
        assertThat(envelope).isNotEmpty();
        assertThat(client.run("run-tcp")).isEqualTo(new RunView("run-tcp", RunPhase.SUSPENDED, 1, true, false));
        client.release(s, "run-tcp");
        assertThat(client.runs()).containsExactly(new RunView("run-tcp", RunPhase.SUSPENDED, 1, false, false));
        client.closeSession(s);
    }

    @Test
    void cli_statusOverTcp_provesTheHelperAndShowsIt() throws Exception {
        Process p = new ProcessBuilder(HelperProcess.command("status", "--listen", "127.0.0.1:" + helper.port(), "--token-file",
                tokenFile.toString())).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("http://127.0.0.1:" + helper.port()).doesNotContain(token);
    }

    /**
     * A man in the middle: a process holds the port the client was given and relays every byte
     * both ways to the real helper on its own port. The helper answers the relayed proof, but for
     * its own endpoint, so the client refuses it and the relay never sees the token or the body.
     * Before the endpoint was in the MAC the relayed proof passed and the relay read the token.
     */
    @Test
    void relayToTheHelperFromAnotherPort_getsNeitherTheTokenNorTheBody() throws Exception {
        java.io.ByteArrayOutputStream seen = new java.io.ByteArrayOutputStream();
        try (java.net.ServerSocket relay = new java.net.ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = Thread.ofPlatform().daemon().start(() -> {
                while (!relay.isClosed()) {
                    try (Socket c = relay.accept(); Socket h = new Socket(InetAddress.getLoopbackAddress(), helper.port())) {
                        Thread back = Thread.ofPlatform().daemon().start(() -> {
                            try {
                                h.getInputStream().transferTo(c.getOutputStream());
                            } catch (IOException e) {
                                // either end closed
                            }
                        });
                        InputStream in = c.getInputStream();
                        for (int b; (b = in.read()) >= 0; ) {
                            synchronized (seen) {
                                seen.write(b);
                            }
                            h.getOutputStream().write(b);
                        }
                        back.join(5_000);
                    } catch (IOException | InterruptedException e) {
                        // the relay closed, or one end did
                    }
                }
            });
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), relay.getLocalPort(),
                    tokenFile)).build();
            Throwable refused = org.assertj.core.api.Assertions.catchThrowable(client::openSession);
            assertThat(refused).isInstanceOf(spice.authority.host.HelperUntrusted.class)
                    .hasMessageContaining("its proof is wrong").hasMessageNotContaining(token);
            relay.close();
            t.join(5_000);
        }
        String got;
        synchronized (seen) {
            got = seen.toString(StandardCharsets.ISO_8859_1);
        }
        // The relay passed the proof request on (the helper answered it), and nothing after it.
        assertThat(got).startsWith("GET /v1/endpoint-proof?nonce=").doesNotContain(token).doesNotContain("Authorization")
                .doesNotContain("/v1/sessions");
    }
}
