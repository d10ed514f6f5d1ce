package spice.authority.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A freshly started app-image helper for the benchmarks: {@code IMAGE/bin/spice-authority serve
 * --authority-dir DIR --socket SOCKET}, started, awaited until it prints {@code listening on
 * unix:SOCKET}, and stopped with SIGTERM on close. Standard error goes to {@code log}; standard
 * output is drained by a daemon thread so the helper never blocks on it.
 */
final class HelperProcess implements AutoCloseable {
    private final Process process;
    final Path socket;

    /**
     * @param env extra environment (e.g. {@code JAVA_TOOL_OPTIONS} for a flight recording, or a
     *            quota such as {@code SPICE_AUTHORITY_MAX_SESSIONS_PER_PROCESS})
     */
    HelperProcess(Path image, Path authorityDir, Path socket, Path log, Map<String, String> env) throws IOException {
        this.socket = socket;
        List<String> cmd = new ArrayList<>(List.of(image.resolve("bin/spice-authority").toString(), "serve",
                "--authority-dir", authorityDir.toString(), "--socket", socket.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
        pb.environment().putAll(env);
        process = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith("listening on unix:")) {
                break;
            }
        }
        if (line == null) {
            throw new IOException("the helper ended before it listened; see " + log + ":\n" + Files.readString(log));
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // discard
                }
            } catch (IOException e) {
                // the helper ended
            }
        }, "helper-stdout");
        drain.setDaemon(true);
        drain.start();
    }

    long pid() {
        return process.pid();
    }

    /**
     * CPU time (user + system, in clock ticks) of each of the helper's threads so far, summed by
     * thread name with digits folded ({@code executor-thread-N}), from {@code /proc/PID/task/*&#47;stat}.
     */
    Map<String, Long> threadTicks() {
        Map<String, Long> ticks = new java.util.TreeMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + process.pid() + "/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "N");
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks.merge(name, Long.parseLong(f[11]) + Long.parseLong(f[12]), Long::sum);
                } catch (IOException | RuntimeException e) {
                    // the thread ended
                }
            }
        } catch (IOException e) {
            // the helper ended
        }
        return ticks;
    }

    /** Per-thread-name CPU ticks between two {@link #threadTicks()} readings, largest first, as text. */
    static String ticksBetween(Map<String, Long> before, Map<String, Long> after) {
        StringBuilder sb = new StringBuilder();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sb.append(' ').append(e.getKey()).append('=').append(e.getValue() * 10).append("ms"));
        return sb.toString().trim();
    }

    /** VmRSS of the helper in KiB, or -1. */
    long rssKib() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone
        }
        return -1;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
        }
    }
}
