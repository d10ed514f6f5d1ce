package spice.authority.app.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Where {@code serve} listens on each OS, decided before anything is opened. Windows serves loopback
 * TCP with the token only (no Unix socket, no uid); Linux and macOS keep their socket defaults.
 */
class ServeListenerTest {

    private static final String WINDOWS = "Windows 11";

    private static java.util.function.UnaryOperator<String> env(Map<String, String> m) {
        return m::get;
    }

    @Test
    void windows_default_isLoopbackTcpWithTokenUnderLocalAppData() throws Exception {
        ServeCommand.Listener l = ServeCommand.listener(WINDOWS,
                env(Map.of("LOCALAPPDATA", "C:\\Users\\me\\AppData\\Local", "XDG_RUNTIME_DIR", "/run/user/1")), -1,
                null, null, null);
        assertThat(l).isEqualTo(new ServeCommand.Listener(null, "127.0.0.1:47878",
                "C:\\Users\\me\\AppData\\Local\\spice-agent\\endpoint\\token"));
    }

    @Test
    void windows_givenListenerAndToken_areKept() throws Exception {
        assertThat(ServeCommand.listener(WINDOWS, env(Map.of()), -1, null, "[::1]:9000", "D:\\t\\token"))
                .isEqualTo(new ServeCommand.Listener(null, "[::1]:9000", "D:\\t\\token"));
        assertThat(ServeCommand.listener(WINDOWS, env(Map.of("LOCALAPPDATA", "C:\\L\\")), -1, null, "127.0.0.1:1", null))
                .isEqualTo(new ServeCommand.Listener(null, "127.0.0.1:1", "C:\\L\\spice-agent\\endpoint\\token"));
    }

    @Test
    void windows_socket_refused() {
        assertThatThrownBy(() -> ServeCommand.listener(WINDOWS, env(Map.of("LOCALAPPDATA", "C:\\L")), -1, "C:\\s.sock", null, null))
                .isInstanceOf(ServeCommand.Refusal.class)
                .hasMessageContaining("--socket C:\\s.sock: the helper serves no Unix socket on Windows");
    }

    @Test
    void windows_noUsableLocalAppData_refusedNamingTheFix() {
        for (Map<String, String> e : java.util.List.of(Map.<String, String>of(), Map.of("LOCALAPPDATA", "relative\\dir"),
                Map.of("LOCALAPPDATA", "C:/Users/me"), Map.of("LOCALAPPDATA", "\\\\server\\share"))) {
            assertThatThrownBy(() -> ServeCommand.listener(WINDOWS, env(e), -1, null, null, null)).as(e.toString())
                    .isInstanceOf(ServeCommand.Refusal.class)
                    .hasMessageContaining("LOCALAPPDATA is not an absolute drive path; pass --token-file");
        }
    }

    @Test
    void posix_defaultsUnchanged() throws Exception {
        assertThat(ServeCommand.listener("Linux", env(Map.of("XDG_RUNTIME_DIR", "/run/user/1000")), 1000, null, null, null))
                .isEqualTo(new ServeCommand.Listener("/run/user/1000/spice-agent/authority.sock", null, null));
        assertThat(ServeCommand.listener("Mac OS X", env(Map.of()), 501, null, "127.0.0.1:0", null))
                .isEqualTo(new ServeCommand.Listener(null, "127.0.0.1:0", "/tmp/spice-agent-501/token"));
        assertThat(ServeCommand.listener("Linux", env(Map.of()), 7, "/s/a.sock", null, null))
                .isEqualTo(new ServeCommand.Listener("/s/a.sock", null, null));
        assertThatThrownBy(() -> ServeCommand.listener("Linux", env(Map.of()), -1, null, null, null))
                .isInstanceOf(ServeCommand.Refusal.class).hasMessageContaining("unknown user id");
    }

    @Test
    void parentOf_absoluteFilePathsOnly() throws Exception {
        assertThat(ServeCommand.parentOf("/run/user/1/spice-agent/token")).isEqualTo("/run/user/1/spice-agent");
        for (String bad : new String[] {"token", "relative/token", "/", "/dir/", "/a\u0000b/token"}) {
            assertThatThrownBy(() -> ServeCommand.parentOf(bad)).as(bad).isInstanceOf(ServeCommand.Refusal.class)
                    .hasMessageContaining("NAME (must be an absolute file path inside a directory)");
        }
    }
}
