package spice.authority.app.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import spice.authority.host.RawJson;

/** One host process of a demo scenario and its JSON lines. */
final class HostProcess {
    final Process process;
    final BlockingQueue<Object> lines = new LinkedBlockingQueue<>();
    final StringBuffer stderr = new StringBuffer();
    long lastSuspendedSeq = -1;
    private static final Object END = new Object();
    private static final long STEP_TIMEOUT_S = Demo.STEP_TIMEOUT_S;

    private final String proc;

    private HostProcess(String proc, Process p) {
        this.proc = proc;
        this.process = p;
    }

    /** Starts {@code mainClass} of the host library with {@code args}; its standard input stays open. */
    static HostProcess start(String proc, String mainClass, List<String> args, List<Process> processes)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(HostLauncher.java().toString(), "-XX:+UseSerialGC", "-Xmx64m",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "--enable-native-access=ALL-UNNAMED", "-cp",
                join(HostLauncher.hostClassPath()), mainClass));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).start(); // stdin stays open: the host ends when it closes
        processes.add(p);
        HostProcess h = new HostProcess(proc, p);
        Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    try {
                        h.lines.add(RawJson.of(l).object());
                    } catch (IOException e) {
                        h.stderr.append("unreadable line from host ").append(proc).append('\n');
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
            h.lines.add(END);
        });
        Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    h.stderr.append(l).append('\n');
                }
            } catch (IOException ignored) {
                // the process ended
            }
        });
        return h;
    }

    private static String join(List<Path> paths) {
        StringBuilder b = new StringBuilder();
        for (Path p : paths) {
            if (!b.isEmpty()) {
                b.append(java.io.File.pathSeparatorChar);
            }
            b.append(p);
        }
        return b.toString();
    }

    /** The next line, or null at the end of output; a silence past the step timeout is a failure. */
    @SuppressWarnings("unchecked")
    Map<String, Object> next() throws InterruptedException, IOException {
        Object o = lines.poll(STEP_TIMEOUT_S, TimeUnit.SECONDS);
        if (o == null) {
            throw new IOException("host " + proc + " printed nothing for " + STEP_TIMEOUT_S + " s: " + stderrTail());
        }
        if (o == END) {
            return null;
        }
        Map<String, Object> m = (Map<String, Object>) o;
        if ("RunSuspended".equals(m.get("event")) && m.get("seq") instanceof Long s) {
            lastSuspendedSeq = s;
        }
        return m;
    }

    /** Relays lines until one matches; returns it, or null when the host ended first. */
    Map<String, Object> relayUntil(Output out, Predicate<Map<String, Object>> stop) throws InterruptedException, IOException {
        Map<String, Object> l;
        while ((l = next()) != null) {
            out.relay(l);
            if (stop.test(l)) {
                return l;
            }
        }
        return null;
    }

    int waitExit() throws InterruptedException {
        if (!process.waitFor(STEP_TIMEOUT_S, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }

    String stderrTail() {
        String s = stderr.toString().strip();
        return s.isEmpty() ? "(no error output)" : s.substring(Math.max(0, s.length() - 400));
    }
}
