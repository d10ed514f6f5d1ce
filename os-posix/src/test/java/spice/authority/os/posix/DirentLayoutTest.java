package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The directory-listing table of {@link PosixPlatform} against this machine's C headers. */
class DirentLayoutTest {

    /** glibc's {@code struct dirent64} is the kernel's {@code struct linux_dirent64} that getdents64 fills. */
    private static final String PROBE = """
            #define _GNU_SOURCE 1
            #include <dirent.h>
            #include <stddef.h>
            #include <stdio.h>
            #include <sys/syscall.h>
            int main(void) {
                printf("SYS_getdents64 %ld\\n", (long) SYS_getdents64);
                printf("offsetof.dirent64.d_ino %zu\\n", offsetof(struct dirent64, d_ino));
                printf("offsetof.dirent64.d_reclen %zu\\n", offsetof(struct dirent64, d_reclen));
                printf("sizeof.dirent64.d_reclen %zu\\n", sizeof(((struct dirent64 *) 0)->d_reclen));
                printf("offsetof.dirent64.d_type %zu\\n", offsetof(struct dirent64, d_type));
                printf("offsetof.dirent64.d_name %zu\\n", offsetof(struct dirent64, d_name));
                return 0;
            }
            """;

    @Test
    void linuxTables_getdents64Numbers_macosHasNone() {
        assertThat(PosixPlatform.forName("linux-x86_64").orElseThrow().SYS_getdents64).isEqualTo(217);
        assertThat(PosixPlatform.forName("linux-aarch64").orElseThrow().SYS_getdents64).isEqualTo(61);
        for (String linux : new String[] {"linux-x86_64", "linux-aarch64"}) {
            PosixPlatform p = PosixPlatform.forName(linux).orElseThrow();
            assertThat(p.hasGetdents64()).isTrue();
            assertThat(p.direntReclen).isEqualTo(16);
            assertThat(p.direntName).isEqualTo(19);
        }
        assertThat(PosixPlatform.forName("macos-aarch64").orElseThrow().hasGetdents64()).isFalse();
        assertThat(PosixPlatform.forName("macos-x86_64").orElseThrow().hasGetdents64()).isFalse();
    }

    @Test
    void currentLinuxTable_matchesTheCHeaders() throws Exception {
        PosixPlatform table = PosixPlatform.current().orElseThrow();
        assumeTrue(table.hasGetdents64(), "not Linux");
        Path gcc = null;
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path g = Path.of(d.isEmpty() ? "." : d, "gcc");
            if (Files.isExecutable(g)) {
                gcc = g;
                break;
            }
        }
        assumeTrue(gcc != null, "gcc not found on PATH");
        Path dir = Files.createTempDirectory("spice-dirent-probe-");
        try {
            Path src = dir.resolve("probe.c");
            Path exe = dir.resolve("probe");
            Files.writeString(src, PROBE);
            run(gcc.toString(), "-Wall", "-Werror", "-o", exe.toString(), src.toString());
            Map<String, Long> probed = new TreeMap<>();
            for (String line : run(exe.toString()).split("\n")) {
                if (!line.isBlank()) {
                    String[] kv = line.trim().split(" ");
                    probed.put(kv[0], Long.parseLong(kv[1]));
                }
            }
            assertThat(new TreeMap<>(table.directoryConstants())).isEqualTo(probed);
        } finally {
            TestTree.deleteTree(dir);
        }
    }

    private static String run(String... command) throws Exception {
        Process proc = new ProcessBuilder(command).redirectErrorStream(true).start();
        proc.getOutputStream().close();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as("%s: %s", String.join(" ", command), out).isZero();
        return out;
    }
}
