package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperUnreachable;
import spice.authority.host.RetryPolicy;

/** The CLI reads the token file through the secure directory layer; the content rule is the host's. */
class CliTokenReaderTest {
    private static final String TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    private static AuthorityClient client(int port, Path tokenFile) {
        return AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), port, tokenFile))
                .tokenReader(new CliTokenReader()).retry(RetryPolicy.NONE).build();
    }

    @Test
    void read_ownerOnlyFile_sendsTheTrimmedTokenAsBearer(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN + "\n");
        try (FakeHelper h = FakeHelper.tcp(TOKEN, r -> FakeHelper.json(200, "[]"))) {
            assertThat(client(h.port(), tokenFile).runs()).isEmpty();
            assertThat(h.requests().getFirst().header("Authorization")).isEqualTo("Bearer " + TOKEN);
        }
    }

    @Test
    void read_missingFile_isUnreachable_andBadContentIsRefusedWithoutShowingIt(@TempDir Path tmp) throws Exception {
        assertThatThrownBy(() -> new CliTokenReader().read(tmp.resolve("none"))).isInstanceOf(HelperUnreachable.class)
                .hasMessageContaining("no token file");
        Path bad = tmp.resolve("bad");
        FakeHelper.writeToken(bad, "secret-part\r\nInjected: yes");
        assertThatThrownBy(() -> new CliTokenReader().read(bad)).hasMessageContaining("not a token")
                .hasMessageNotContaining("secret").hasMessageNotContaining("Injected");
    }

    /** "dir/link/../token" is refused: collapsing ".." by text could name another file than the kernel would. */
    @Test
    void read_pathWithDotDot_isRefused_dotIsNot(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        Files.createDirectory(tmp.resolve("sub"));
        assertThatThrownBy(() -> new CliTokenReader().read(tmp.resolve("sub/../token"))).hasMessageContaining("'..'")
                .hasMessageNotContaining(TOKEN);
        assertThat(new String(new CliTokenReader().read(tmp.resolve("./token")), StandardCharsets.US_ASCII)).isEqualTo(TOKEN);
    }

    @Test
    void read_fileReadableByOthers_orALink_isRefusedWithoutReadingIt(@TempDir Path tmp) throws Exception {
        Path loose = tmp.resolve("token");
        FakeHelper.writeToken(loose, TOKEN);
        Files.setPosixFilePermissions(loose, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> new CliTokenReader().read(loose)).hasMessageContaining("refused").hasMessageNotContaining(TOKEN);
        Path real = tmp.resolve("real");
        FakeHelper.writeToken(real, TOKEN);
        Path link = tmp.resolve("link");
        Files.createSymbolicLink(link, real);
        assertThatThrownBy(() -> new CliTokenReader().read(link)).hasMessageContaining("refused").hasMessageNotContaining(TOKEN);
        assertThat(Files.readString(real, StandardCharsets.US_ASCII)).isEqualTo(TOKEN);
    }
}
