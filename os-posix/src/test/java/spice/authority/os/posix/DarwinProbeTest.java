package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * {@code native/darwin_probe.c} against {@link PosixPlatform#darwinConstants()}.
 *
 * <p>On every OS: the probe prints exactly the table's keys (read from its macro lines), so the
 * comparison on a Mac is complete. On macOS only: compile it with {@code cc} and compare every
 * value with the current table, as {@code NativeProbeTest} does for {@code struct stat}.
 * NOT RUN HERE: the macOS half has never run (no Mac on this project's machines).
 */
class DarwinProbeTest {

    private static final Pattern LINE = Pattern.compile(
            "^\\s*(CONST|UCONST|SIZEOF_STRUCT|SIZEOF_TYPE|MEMBER|SYMBOL|SYMBOL_INODE64)\\((\\w+)(?:,\\s*(\\w+))?\\);\\s*$");

    private static Path probeSource() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            Path c = p.resolve("native/darwin_probe.c");
            if (Files.isRegularFile(c)) {
                return c;
            }
        }
        throw new AssertionError("native/darwin_probe.c not found above " + here);
    }

    @Test
    void probe_printsExactlyTheKeysOfBothMacTables() throws Exception {
        Set<String> printed = new TreeSet<>();
        for (String line : Files.readAllLines(probeSource())) {
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            switch (m.group(1)) {
                case "CONST", "UCONST" -> printed.add(m.group(2));
                case "SIZEOF_STRUCT" -> printed.add("sizeof.struct_" + m.group(2));
                case "SIZEOF_TYPE" -> printed.add("sizeof." + m.group(2));
                case "SYMBOL", "SYMBOL_INODE64" -> printed.add("symbol." + m.group(2));
                case "MEMBER" -> {
                    printed.add("offsetof." + m.group(2) + "." + m.group(3));
                    printed.add("sizeof." + m.group(2) + "." + m.group(3));
                }
                default -> throw new AssertionError(line);
            }
        }
        for (String mac : new String[] {"macos-x86_64", "macos-aarch64"}) {
            assertThat(printed).as(mac).isEqualTo(new TreeSet<>(PosixPlatform.forName(mac).orElseThrow().darwinConstants().keySet()));
        }
    }

    @Test
    @EnabledOnOs(OS.MAC)
    void currentMacTable_matchesTheCHeaders() throws Exception {
        PosixPlatform table = PosixPlatform.current().orElseThrow();
        Path dir = Files.createTempDirectory("spice-darwin-probe-");
        try {
            Path exe = dir.resolve("darwin_probe");
            run(List.of("cc", "-Wall", "-Werror", "-O0", "-o", exe.toString(), probeSource().toString()));
            Map<String, Long> probed = new TreeMap<>();
            for (String line : run(List.of(exe.toString())).split("\n")) {
                if (!line.isBlank()) {
                    String[] kv = line.trim().split(" ");
                    probed.put(kv[0], Long.parseLong(kv[1]));
                }
            }
            List<String> mismatches = new ArrayList<>();
            table.darwinConstants().forEach((k, v) -> {
                if (!v.equals(probed.get(k))) {
                    mismatches.add(k + ": table " + v + ", C " + probed.get(k));
                }
            });
            probed.keySet().stream().filter(k -> !table.darwinConstants().containsKey(k))
                    .forEach(k -> mismatches.add(k + ": printed by the probe but missing from the table"));
            assertThat(mismatches).as("table %s", table.name).isEmpty();
        } finally {
            TestTree.deleteTree(dir);
        }
    }

    private static String run(List<String> command) throws Exception {
        Process proc = new ProcessBuilder(command).redirectErrorStream(true).start();
        proc.getOutputStream().close();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as("%s: %s", command, out).isZero();
        return out;
    }
}
