package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Compiles {@code native/stat_probe.c} with gcc and checks this platform's table in
 * {@link PosixPlatform} against what the C headers of this machine say.
 */
class NativeProbeTest {

    private static Path findGcc() {
        String pathEnv = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String d : pathEnv.split(File.pathSeparator)) {
            Path gcc = Path.of(d.isEmpty() ? "." : d, "gcc");
            if (Files.isExecutable(gcc)) {
                return gcc;
            }
        }
        return null;
    }

    private static Path probeSource() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            Path c = p.resolve("native/stat_probe.c");
            if (Files.isRegularFile(c)) {
                return c;
            }
        }
        throw new AssertionError("native/stat_probe.c not found above " + here);
    }

    private static String run(List<String> command) throws Exception {
        Process proc = new ProcessBuilder(command).redirectErrorStream(true).start();
        proc.getOutputStream().close();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as("%s: %s", command, out).isZero();
        return out;
    }

    @Test
    void currentPlatformTable_matchesTheCHeaders() throws Exception {
        Path gcc = findGcc();
        assumeTrue(gcc != null, "gcc not found on PATH: skipping the native layout probe "
                + "(install gcc to check os-posix's struct stat table against this machine)");
        PosixPlatform table = PosixPlatform.current().orElseThrow();
        Path dir = Files.createTempDirectory("spice-stat-probe-");
        try {
            Path exe = dir.resolve("stat_probe");
            run(List.of(gcc.toString(), "-Wall", "-Werror", "-O0", "-o", exe.toString(), probeSource().toString()));
            Map<String, Long> probed = new TreeMap<>();
            for (String line : run(List.of(exe.toString())).split("\n")) {
                if (!line.isBlank()) {
                    String[] kv = line.trim().split(" ");
                    probed.put(kv[0], Long.parseLong(kv[1]));
                }
            }
            List<String> mismatches = new ArrayList<>();
            table.constants().forEach((k, v) -> {
                if (!v.equals(probed.get(k))) {
                    mismatches.add(k + ": table " + v + ", C " + probed.get(k));
                }
            });
            probed.keySet().stream().filter(k -> !table.constants().containsKey(k))
                    .forEach(k -> mismatches.add(k + ": printed by the probe but missing from the table"));
            assertThat(mismatches).as("table %s against %s", table.name, gcc).isEmpty();
        } finally {
            TestTree.deleteTree(dir);
        }
    }
}
