package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuthorityCommandTest {

    /** Every entry below {@code root} with its mode, size and modification time. */
    private static Map<String, String> tree(Path root) throws IOException {
        Map<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                m.put(root.relativize(p).toString(), PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS))
                        + " " + (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? Files.size(p) : -1)
                        + " " + Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).toMillis());
            }
        }
        return m;
    }

    @Test
    void init_absentDirectory_createsIt0700WithIdentity_andCheckThenValidatesWithoutWriting(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("nested/authority");
        CliRun init = CliRun.of("authority", "init", dir.toString());
        assertThat(init.exitCode()).as(init.err()).isZero();
        assertThat(init.out()).startsWith(dir + ": OK created (mode 0700)\nidentity created: scope ");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        assertThat(Files.size(dir.resolve("identity.key"))).isEqualTo(72);

        Map<String, String> before = tree(tmp);
        CliRun check = CliRun.of("authority", "check", "--json", dir.toString());
        assertThat(check.exitCode()).isZero();
        JsonNode v = new ObjectMapper().readTree(check.out());
        assertThat(v.get("identity").asText()).isEqualTo("valid");
        assertThat(v.get("scope_id").asText()).hasSize(64);
        assertThat(tree(tmp)).isEqualTo(before);

        CliRun again = CliRun.of("authority", "init", dir.toString());
        assertThat(again.out()).startsWith(dir + ": OK existing directory validated\nidentity existing: scope " + v.get("scope_id").asText());
    }

    @Test
    void check_absentDirectory_refusedAsMissing_andCreatesNothing(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("absent");
        CliRun r = CliRun.of("authority", "check", dir.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("spice-authority: refused: " + dir + ": MISSING (does not exist)\n");
        assertThat(Files.exists(dir)).isFalse();
    }

    @Test
    void check_wrongMode_refusedNamingTheComponent_andNeverChmods(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("auth");
        assertThat(CliRun.of("authority", "init", dir.toString()).exitCode()).isZero();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-x---"));
        Map<String, String> before = tree(tmp);
        for (String cmd : new String[] {"check", "init"}) {
            CliRun r = CliRun.of("authority", cmd, dir.toString());
            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.err()).startsWith("spice-authority: refused: " + dir + ": MODE");
        }
        assertThat(tree(tmp)).isEqualTo(before);
    }

    @Test
    void init_symlinkInAncestry_refusedAsSymlink(@TempDir Path tmp) throws IOException {
        Path real = Files.createDirectory(tmp.resolve("real"));
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        CliRun r = CliRun.of("authority", "init", link.resolve("auth").toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("spice-authority: refused: " + link + ": SYMLINK");
        assertThat(Files.exists(real.resolve("auth"))).isFalse();
    }

    @Test
    void init_relativePath_refusedAsName() {
        CliRun r = CliRun.of("authority", "init", "relative/dir");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).contains("NAME");
    }

    @Test
    void check_corruptIdentity_refused(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("auth");
        assertThat(CliRun.of("authority", "init", dir.toString()).exitCode()).isZero();
        Files.write(dir.resolve("identity.key"), new byte[72]);
        CliRun r = CliRun.of("authority", "check", dir.toString());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).contains("identity.key").doesNotContain("0000000000");
    }

    /** A file of the wrong length: both commands name the file and the rule, neither calls it a replaced path. */
    @Test
    void identityOfTheWrongLength_initAndCheckNameTheFile(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("auth");
        assertThat(CliRun.of("authority", "init", dir.toString()).exitCode()).isZero();
        Files.write(dir.resolve("identity.key"), new byte[71]);

        CliRun init = CliRun.of("authority", "init", dir.toString());
        CliRun check = CliRun.of("authority", "check", dir.toString());

        assertThat(init.exitCode()).isEqualTo(1);
        assertThat(init.err()).contains(dir.resolve("identity.key") + ": identity file invalid (").contains("72 bytes");
        assertThat(check.exitCode()).isEqualTo(1);
        assertThat(check.err()).contains(dir.resolve("identity.key") + ": INVALID (").doesNotContain("IDENTITY");
    }
}
