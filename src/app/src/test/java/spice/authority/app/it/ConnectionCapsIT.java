package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged helper's connection caps against real attacker processes: a process of another
 * uid (run through {@code setpriv}) holding endpoint-proof connections on TCP, TCP connections
 * without the token counted apart and closed at their deadline, and short-lived children that
 * hand Unix-socket connections to one process over {@code SCM_RIGHTS}. The attackers are Python
 * scripts under {@code src/test/resources/attackers}, run as processes.
 */
class ConnectionCapsIT {
    private static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");
    private static final ObjectMapper JSON = new ObjectMapper();

    private Path root;
    private HelperProcess helper;
    private final List<Process> attackers = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(PYTHON), "the attackers are Python scripts");
        root = Files.createTempDirectory("spice-caps-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        for (Process p : attackers) {
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    /** Starts an attacker script (through {@code prefix}, e.g. setpriv) with its source on the command line. */
    private Process attacker(List<String> prefix, String script, String... args) throws IOException {
        String source;
        try (InputStream in = ConnectionCapsIT.class.getResourceAsStream("/attackers/" + script)) {
            source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(PYTHON.toString(), "-c", source));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        attackers.add(p);
        return p;
    }

    /** The attacker's next line of output, as JSON (waits at most a minute). */
    private static JsonNode report(Process p, BufferedReader out) throws Exception {
        java.util.concurrent.CompletableFuture<String> line = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String l = line.get(60, TimeUnit.SECONDS);
        assertThat(l).as("the attacker's report (alive: %s)", p.isAlive()).isNotNull();
        return JSON.readTree(l);
    }

    private static BufferedReader stdout(Process p) {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), helper.port());
        s.setSoTimeout(10_000);
        sockets.add(s);
        return s;
    }

    /** One keep-alive request on {@code s}; the status line and headers, or "" when the helper closed it. */
    private static String request(Socket s, String target, String headers) throws IOException {
        OutputStream out = s.getOutputStream();
        try {
            out.write(("GET " + target + " HTTP/1.1\r\nHost: localhost\r\n" + headers + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder head = new StringBuilder();
            int c;
            while (!head.toString().endsWith("\r\n\r\n") && (c = in.read()) >= 0) {
                head.append((char) c);
            }
            String h = head.toString();
            String lower = h.toLowerCase(java.util.Locale.ROOT);
            int at = lower.indexOf("content-length:");
            if (at >= 0) {
                in.readNBytes(Integer.parseInt(h.substring(at + 15, h.indexOf("\r\n", at)).trim()));
            } else if (lower.contains("transfer-encoding: chunked")) {
                while (true) {
                    int size = Integer.parseInt(line(in), 16);
                    in.readNBytes(size);
                    line(in);
                    if (size == 0) {
                        break;
                    }
                }
            }
            return h;
        } catch (java.net.SocketException e) {
            return "";
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    /** Whether the helper has closed {@code s} (polls until {@code deadlineMs}). */
    private static boolean closedBy(Socket s, long deadlineMs) throws IOException {
        long until = System.currentTimeMillis() + deadlineMs;
        s.setSoTimeout(100);
        try {
            while (System.currentTimeMillis() < until) {
                try {
                    if (s.getInputStream().read() < 0) {
                        return true;
                    }
                } catch (SocketTimeoutException e) {
                    // still open: poll again
                } catch (java.net.SocketException e) {
                    return true; // reset
                }
            }
            return false;
        } finally {
            s.setSoTimeout(10_000);
        }
    }

    private static long openFds(long pid) throws IOException {
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return s.count();
        }
    }

    @Test
    void tcp_anotherUidHolding512ProofConnections_holdsNone_andTheOwnersCallSucceeds() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(SETPRIV) && "root".equals(System.getProperty("user.name")),
                "setpriv as root runs the attacker as another uid");
        helper = HelperProcess.startTcp(root.resolve("authority"), root.resolve("endpoint/token"));
        String token = Files.readString(root.resolve("endpoint/token")).trim();

        Process other = attacker(List.of(SETPRIV.toString(), "--reuid=54321", "--regid=54321", "--clear-groups"),
                "proof_holder.py", "127.0.0.1", Integer.toString(helper.port()), "512");
        JsonNode r = report(other, stdout(other));
        System.out.printf("ConnectionCapsIT: uid 54321 asked 512 endpoint proofs: %s%n", r);
        assertThat(r.get("answered").asInt()).as("proofs answered to another uid").isZero();
        assertThat(r.get("held").asInt()).as("connections another uid holds").isZero();

        // While that process lives, the owner's authenticated call (and its proof) are answered.
        Socket owner = connect();
        assertThat(request(owner, "/v1/endpoint-proof?nonce=" + "ab".repeat(32), "")).startsWith("HTTP/1.1 200 ");
        assertThat(request(owner, "/v1/authority", "Authorization: Bearer " + token + "\r\n")).startsWith("HTTP/1.1 200 ");
        assertThat(helper.stderr()).contains("refused a TCP connection").contains("belongs to uid 54321, not this user (uid 0)")
                .doesNotContain(token);
    }

    @Test
    void tcp_connectionsWithoutTheToken_countedApart_closedAtTheirDeadline_ownersStayServed() throws Exception {
        helper = HelperProcess.startTcp(root.resolve("authority"), root.resolve("endpoint/token"),
                List.of("-Dspice.authority.max-unauthenticated-connections=8", "-Dspice.authority.unauthenticated-timeout=3s"));
        String bearer = "Authorization: Bearer " + Files.readString(root.resolve("endpoint/token")).trim() + "\r\n";
        Socket owner = connect();
        assertThat(request(owner, "/v1/authority", bearer)).startsWith("HTTP/1.1 200 ");

        // Twenty connections that never present the token: eight are kept, the rest closed at once
        // (which eight depends on the event loops that accept them).
        List<Socket> idle = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            idle.add(connect());
        }
        java.util.Set<Socket> closed = new java.util.HashSet<>();
        long until = System.currentTimeMillis() + 1_500;
        while (closed.size() < 12 && System.currentTimeMillis() < until) {
            for (Socket s : idle) {
                if (!closed.contains(s) && closedBy(s, 5)) {
                    closed.add(s);
                }
            }
        }
        assertThat(closed).as("connections past max-unauthenticated-connections, closed at once").hasSize(12);
        for (Socket s : idle) {
            if (!closed.contains(s)) {
                assertThat(closedBy(s, 5)).as("within max-unauthenticated-connections, before the deadline").isFalse();
            }
        }
        // The owner's authenticated connection is not among them, and a new one gets in once the
        // deadline has closed the eight.
        assertThat(request(owner, "/v1/authority", bearer)).startsWith("HTTP/1.1 200 ");
        for (Socket s : idle) {
            assertThat(closedBy(s, 10_000)).as("closed at unauthenticated-timeout").isTrue();
        }
        assertThat(request(connect(), "/v1/authority", bearer)).startsWith("HTTP/1.1 200 ");
        assertThat(request(owner, "/v1/authority", bearer)).as("authenticated: the idle timeout, not the deadline")
                .startsWith("HTTP/1.1 200 ");
    }

    @Test
    void unixSocket_fortyChildrenHandingConnectionsOverScmRights_capsHold() throws Exception {
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"));
        long baseline = openFds(helper.process.pid());
        Process hoarder = attacker(List.of(), "fd_hoarder.py", helper.socket.toString(), "40", "32");
        BufferedReader out = stdout(hoarder);
        JsonNode first = report(hoarder, out);
        long held = openFds(helper.process.pid());
        System.out.printf("ConnectionCapsIT: 40 children x 32 connections handed over SCM_RIGHTS: %s; helper descriptors %d -> %d%n",
                first, baseline, held);
        assertThat(first.path("first").path("200").asInt()).as("connections answered, all children together")
                .isLessThanOrEqualTo(512);
        assertThat(held - baseline).as("descriptors the helper holds for them").isLessThanOrEqualTo(512 + 8);

        hoarder.getOutputStream().write('\n');
        hoarder.getOutputStream().flush();
        JsonNode then = report(hoarder, out);
        System.out.printf("ConnectionCapsIT: the same connections used by the process they were handed to: %s%n", then);
        assertThat(then.path("then").path("200").asInt()).as("handed-over connections that still work").isZero();
        assertThat(then.path("then").path("503").asInt()).as("refused with a problem").isPositive();
        // The owner, another process, is served once the refused connections are closed.
        // The refused connections close as their answers go out.
        int status = Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20), () -> {
            try {
                return helper.http().get("/q/health/live").status();
            } catch (IOException e) {
                return 0;
            }
        }, s -> s == 200);
        assertThat(status).isEqualTo(200);
        assertThat(openFds(helper.process.pid()) - baseline).as("descriptors after the refusals").isLessThan(64);
    }
}
