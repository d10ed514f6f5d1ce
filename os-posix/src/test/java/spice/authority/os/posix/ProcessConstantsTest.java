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

/** The process watcher's constants in {@link PosixPlatform} against this machine's C headers. */
class ProcessConstantsTest {

    private static final String PROBE = """
            #include <errno.h>
            #include <poll.h>
            #include <stdio.h>
            #include <sys/eventfd.h>
            #include <sys/syscall.h>
            int main(void) {
                printf("ESRCH %d\\n", ESRCH);
                printf("POLLIN %d\\n", POLLIN);
                printf("POLLERR %d\\n", POLLERR);
                printf("POLLHUP %d\\n", POLLHUP);
                printf("POLLNVAL %d\\n", POLLNVAL);
                printf("EFD_CLOEXEC %d\\n", EFD_CLOEXEC);
                printf("EFD_NONBLOCK %d\\n", EFD_NONBLOCK);
            #ifdef SYS_pidfd_open
                printf("SYS_pidfd_open %ld\\n", (long) SYS_pidfd_open);
            #endif
                return 0;
            }
            """;

    @Test
    void linuxTables_pidfdOpenIs434_macosHasNone() {
        assertThat(PosixPlatform.forName("linux-x86_64").orElseThrow().SYS_pidfd_open).isEqualTo(434);
        assertThat(PosixPlatform.forName("linux-aarch64").orElseThrow().SYS_pidfd_open).isEqualTo(434);
        assertThat(PosixPlatform.forName("macos-aarch64").orElseThrow().hasPidfd()).isFalse();
        assertThat(PosixPlatform.forName("macos-x86_64").orElseThrow().hasPidfd()).isFalse();
        assertThat(PosixPlatform.forName("linux-x86_64").orElseThrow().errnoName(3)).isEqualTo("ESRCH");
    }

    @Test
    void currentLinuxTable_matchesTheCHeaders() throws Exception {
        PosixPlatform table = PosixPlatform.current().orElseThrow();
        assumeTrue(table.hasPidfd(), "not Linux");
        Path gcc = null;
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path g = Path.of(d.isEmpty() ? "." : d, "gcc");
            if (Files.isExecutable(g)) {
                gcc = g;
                break;
            }
        }
        assumeTrue(gcc != null, "gcc not found on PATH");
        Path dir = Files.createTempDirectory("spice-process-probe-");
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
            if (!probed.containsKey("SYS_pidfd_open")) {
                probed.put("SYS_pidfd_open", 434L); // headers older than 5.3: nothing to compare
            }
            assertThat(new TreeMap<>(table.processConstants())).isEqualTo(probed);
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
