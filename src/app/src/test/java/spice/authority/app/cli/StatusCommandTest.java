package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.app.command.ExitCodes;
import spice.authority.host.FakeHelper;

class StatusCommandTest {
    static final String AUTHORITY = "{\"scope_id\":\"9f2c4e0b7a1d3c5e9f2c4e0b7a1d3c5e\",\"key_generation\":1,\"state\":\"open\","
            + "\"directory\":\"/home/u/.local/state/spice-agent/authority\",\"endpoint\":\"unix:/run/user/1000/spice-agent/authority.sock\","
            + "\"sessions\":2,\"owned_runs\":1,\"imports\":0,\"leases\":1,\"runs_by_phase\":{\"SUSPENDED\":3,\"ACTIVE\":1},"
            + "\"unreadable_records\":0}";
    private static final String TOKEN = "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface";

    @Test
    void status_human_printsAlignedLinesWithCountsByPhase(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("authority.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.json(200, AUTHORITY))) {
            CliRun r = CliRun.of("status", "--socket", sock.toString());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.err()).isEmpty();
            assertThat(r.out()).isEqualTo("""
                    endpoint        unix:/run/user/1000/spice-agent/authority.sock
                    state           open
                    scope ID        9f2c4e0b7a1d3c5e9f2c4e0b7a1d3c5e
                    key generation  1
                    directory       /home/u/.local/state/spice-agent/authority
                    sessions        2
                    owned runs      1
                    imports         0
                    leases          1
                    runs            4 (ACTIVE 1, SUSPENDED 3)
                    """);
            assertThat(h.requests()).extracting(FakeHelper.Request::line).containsExactly("GET /v1/authority");
        }
    }

    @Test
    void status_json_printsTheHelpersJsonIndented_evenWhenChunked(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("authority.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.chunked(200, "application/json", AUTHORITY, 16))) {
            CliRun r = CliRun.of("status", "--json", "--socket", sock.toString());
            assertThat(r.exitCode()).as(r.err()).isZero();
            ObjectMapper m = new ObjectMapper();
            assertThat(m.readTree(r.out())).isEqualTo(m.readTree(AUTHORITY));
            assertThat(r.out()).startsWith("{\n  \"scope_id\" : \"9f2c").contains("\n  \"runs_by_phase\" : {\n    \"SUSPENDED\" : 3,");
        }
    }

    @Test
    void status_emptyAuthorityAndUnreadableRecords_andHostileStringsAreNeutralised(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("authority.sock");
        String body = "{\"scope_id\":\"ab\",\"key_generation\":18446744073709551615,\"state\":\"open\\u001b[2J\",\"endpoint\":\"unix:/x\","
                + "\"sessions\":0,\"owned_runs\":0,\"imports\":0,\"leases\":0,\"runs_by_phase\":{},\"unreadable_records\":2}";
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.json(200, body))) {
            CliRun r = CliRun.of("status", "--socket", sock.toString());
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).contains("state           open?[2J\n").contains("key generation  18446744073709551615\n")
                    .contains("runs            0\n").contains("unreadable      2 run records").doesNotContain("\u001b");
        }
    }

    @Test
    void status_refusedByTheHelper_isExit1WithOneLineCodeAndDetail(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("authority.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.problem(503, "closing", "the helper is shutting down"))) {
            CliRun r = CliRun.of("status", "--socket", sock.toString());
            assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).isEqualTo("spice-authority: closing: the helper is shutting down\n");
        }
    }

    @Test
    void status_nonProblemError_isExit1UnexpectedResponse(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("authority.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> FakeHelper.raw(500, "text/html", "<html>oops</html>"))) {
            CliRun r = CliRun.of("status", "--socket", sock.toString());
            assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(r.err()).isEqualTo("spice-authority: unexpected response from the helper at unix:" + sock
                    + ": HTTP 500 Internal Server Error\n");
        }
    }

    @Test
    void status_noHelper_isExit1WithHowToStartIt(@TempDir Path tmp) {
        Path sock = tmp.resolve("authority.sock");
        CliRun r = CliRun.of("status", "--socket", sock.toString());
        assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).isEqualTo("spice-authority: no helper is running: no helper socket at " + sock
                + "; start it with ./spice-authority serve --socket " + sock + "\n");
    }

    @Test
    void status_overTcp_sendsTheBearerTokenAfterTheProof_andAWrongTokenFileRefusesTheServer(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> ("Bearer " + TOKEN).equals(r.header("Authorization"))
                ? FakeHelper.json(200, AUTHORITY)
                : FakeHelper.problem(401, "unauthorized", "missing or wrong bearer token (see the token file)"))) {
            String listen = "127.0.0.1:" + h.port();
            CliRun ok = CliRun.of("status", "--listen", listen, "--token-file", tokenFile.toString());
            assertThat(ok.exitCode()).as(ok.err()).isZero();
            assertThat(ok.out()).startsWith("endpoint        unix:/run/user/1000/spice-agent/authority.sock\n");
            FakeHelper.Request req = h.requests().getFirst();
            assertThat(req.header("Authorization")).isEqualTo("Bearer " + TOKEN);
            assertThat(req.header("Host")).isEqualTo("localhost");
            assertThat(req.header("Connection")).isEqualTo("close");

            assertThat(h.proofs()).isEqualTo(1);

            // With another token in the file the helper's proof does not match it: the CLI
            // refuses the server and sends neither that token nor the request.
            FakeHelper.writeToken(tokenFile, "0000");
            CliRun bad = CliRun.of("status", "--listen", listen, "--token-file", tokenFile.toString());
            assertThat(bad.exitCode()).isEqualTo(ExitCodes.REFUSED);
            assertThat(bad.err()).startsWith("spice-authority: refused: the server at http://" + listen
                    + " did not prove it holds the helper's token (its proof is wrong").contains("nothing was sent")
                    .doesNotContain("0000").doesNotContain(TOKEN);
            assertThat(h.requests()).hasSize(1);
            assertThat(h.proofs()).isEqualTo(2);
        }
    }

    @Test
    void status_tcpNoHelper_saysHowToStartItAndNeverPrintsTheToken(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        int port;
        try (var s = java.nio.channels.ServerSocketChannel.open()) {
            s.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            port = ((java.net.InetSocketAddress) s.getLocalAddress()).getPort();
        }
        CliRun r = CliRun.of("status", "--listen", "127.0.0.1:" + port, "--token-file", tokenFile.toString());
        assertThat(r.exitCode()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.err()).contains("no helper is running").contains("start it with ./spice-authority serve --listen 127.0.0.1:" + port)
                .doesNotContain(TOKEN).hasLineCount(1);
    }

    @Test
    void usageErrors_areExit2() {
        assertThat(CliRun.of("status", "--socket", "/x.sock", "--listen", "127.0.0.1:1").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(CliRun.of("status", "--token-file", "/x").exitCode()).isEqualTo(ExitCodes.USAGE);
        CliRun remote = CliRun.of("status", "--listen", "10.0.0.1:7878");
        assertThat(remote.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(remote.err()).contains("only loopback");
        assertThat(CliRun.of("status", "--listen", "localhost:7878").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(CliRun.of("status", "extra").exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void defaultEndpoint_followsServe_xdgRuntimeDirElseTmpWithUid() throws Exception {
        StatusCommand c = new StatusCommand();
        c.env = Map.of("XDG_RUNTIME_DIR", "/run/user/1000");
        c.uid = () -> 1234;
        assertThat(c.endpoint()).isEqualTo(new spice.authority.host.HelperEndpoint.Unix(Path.of("/run/user/1000/spice-agent/authority.sock")));
        c.env = Map.of();
        assertThat(c.endpoint()).isEqualTo(new spice.authority.host.HelperEndpoint.Unix(Path.of("/tmp/spice-agent-1234/authority.sock")));
        c.env = Map.of("XDG_RUNTIME_DIR", "relative");
        assertThat(c.endpoint()).isEqualTo(new spice.authority.host.HelperEndpoint.Unix(Path.of("/tmp/spice-agent-1234/authority.sock")));
        c.listen = "127.0.0.1:7878";
        assertThat(((spice.authority.host.HelperEndpoint.Tcp) c.endpoint()).tokenFile()).isEqualTo(Path.of("/tmp/spice-agent-1234/token"));
        c.listen = "[::1]:7878";
        assertThat(c.endpoint().display()).isEqualTo("http://[0:0:0:0:0:0:0:1]:7878");
        assertThat(HelperCommand.ownUid()).isEqualTo(((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue());
    }

    @Test
    void defaultEndpoint_onWindows_isLoopbackTcpWithTokenUnderLocalAppData() throws Exception {
        StatusCommand c = new StatusCommand();
        c.osName = "Windows 11";
        c.env = Map.of("LOCALAPPDATA", "C:\\Users\\me\\AppData\\Local", "XDG_RUNTIME_DIR", "/run/user/1000");
        c.uid = () -> {
            throw new AssertionError("no uid on Windows");
        };
        spice.authority.host.HelperEndpoint.Tcp t = (spice.authority.host.HelperEndpoint.Tcp) c.endpoint();
        assertThat(t.display()).isEqualTo("http://127.0.0.1:47878");
        assertThat(t.tokenFile()).isEqualTo(Path.of("C:\\Users\\me\\AppData\\Local\\spice-agent\\endpoint", "token"));
        c.listen = "[::1]:9000";
        assertThat(c.endpoint().display()).isEqualTo("http://[0:0:0:0:0:0:0:1]:9000");
        c.listen = null;
        c.tokenFile = "C:\\t\\token"; // the default is TCP, so --token-file alone is not a usage error
        assertThat(((spice.authority.host.HelperEndpoint.Tcp) c.endpoint()).tokenFile()).isEqualTo(Path.of("C:\\t\\token"));
        c.tokenFile = null;
        c.env = Map.of("LOCALAPPDATA", "relative");
        assertThatRefused(c, "LOCALAPPDATA is not an absolute drive path");
        c.env = Map.of();
        assertThatRefused(c, "pass --token-file");
        c.socket = "C:\\x.sock";
        org.assertj.core.api.Assertions.assertThatThrownBy(c::endpoint).isInstanceOf(HelperCommand.Usage.class)
                .hasMessageContaining("no Unix socket on Windows");
    }

    private static void assertThatRefused(HelperCommand c, String why) {
        org.assertj.core.api.Assertions.assertThatThrownBy(c::endpoint).isInstanceOf(HelperCommand.Refused.class)
                .hasMessageContaining(why);
    }

    @Test
    void help_hasAWorkingExample() {
        CliRun r = CliRun.of("status", "--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("Usage: spice-authority status").contains("Examples:").contains("  spice-authority status\n")
                .contains("--socket=PATH").contains("--listen=HOST:PORT").contains("--token-file=FILE").contains("--json");
        assertThat(CliRun.of("--help").out()).contains("status").contains("runs");
    }
}
