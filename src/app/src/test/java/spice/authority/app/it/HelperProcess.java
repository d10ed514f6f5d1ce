package spice.authority.app.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A packaged helper ({@code java -jar quarkus-run.jar serve …}) run as its own process. */
final class HelperProcess implements AutoCloseable {
    static final Path RUNNER = Path.of("target/quarkus-app/quarkus-run.jar").toAbsolutePath();

    final Process process;
    final Path socket;
    final String listeningLine;

    private HelperProcess(Process p, Path socket, String line, StringBuffer stderr) {
        this.process = p;
        this.socket = socket;
        this.listeningLine = line;
        this.liveStderr = stderr;
    }

    private final StringBuffer liveStderr;

    /** Everything the helper wrote to standard error so far (its log). */
    String stderr() {
        return liveStderr.toString();
    }

    static List<String> command(String... args) {
        return command(List.of(), args);
    }

    static List<String> command(List<String> jvmOptions, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // The app-image launcher's heap and JIT (src/app/pom.xml: appimage.heap).
                "-XX:+UseSerialGC", "-Xmx128m", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-jar", RUNNER.toString()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Starts {@code serve} and waits for its "listening on" line. */
    static HelperProcess start(Path authorityDir, Path socket) throws IOException {
        return start(authorityDir, socket, List.of());
    }

    /** Starts {@code serve} with extra JVM options and waits for its "listening on" line. */
    static HelperProcess start(Path authorityDir, Path socket, List<String> jvmOptions) throws IOException {
        return start(authorityDir, socket, jvmOptions, List.of());
    }

    /** As {@link #start(Path, Path, List)}, the command run through {@code prefix} (e.g. prlimit). */
    static HelperProcess start(Path authorityDir, Path socket, List<String> jvmOptions, List<String> prefix) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(command(jvmOptions, "serve", "--authority-dir", authorityDir.toString(), "--socket", socket.toString()));
        return start(cmd, socket);
    }

    /**
     * Starts {@code serve --listen 127.0.0.1:PORT --token-file tokenFile} on a port that was free a
     * moment before and waits for its "listening on http://127.0.0.1:PORT" line ({@link #port()}).
     * (With port 0 the helper prints port 0, not the port it got.)
     */
    static HelperProcess startTcp(Path authorityDir, Path tokenFile) throws IOException {
        return startTcp(authorityDir, tokenFile, List.of());
    }

    /** As {@link #startTcp(Path, Path)}, with extra JVM options (settings as system properties). */
    static HelperProcess startTcp(Path authorityDir, Path tokenFile, List<String> jvmOptions) throws IOException {
        // Port 0: the helper must print the port the system gave it, which every test then uses.
        HelperProcess h = start(command(jvmOptions, "serve", "--authority-dir", authorityDir.toString(), "--listen", "127.0.0.1:0",
                "--token-file", tokenFile.toString()), null);
        if (h.port() == 0) {
            h.process.destroyForcibly();
            throw new IOException("helper printed '" + h.listeningLine + "': port 0, not the port it listens on");
        }
        return h;
    }

    /** The port of a helper started by {@link #startTcp}. */
    int port() {
        return Integer.parseInt(listeningLine.substring(listeningLine.lastIndexOf(':') + 1).trim());
    }

    private static HelperProcess start(List<String> cmd, Path socket) throws IOException {
        Process p = new ProcessBuilder(cmd).start();
        HelperProcess[] holder = new HelperProcess[1];
        StringBuffer err = new StringBuffer();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    err.append(l).append('\n');
                }
            } catch (IOException ignored) {
                // process ended
            }
        });
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String l;
        try {
            l = line.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IOException("helper did not start: " + err);
        }
        if (l == null || !l.startsWith("listening on ")) {
            p.destroyForcibly();
            throw new IOException("helper did not start (" + l + "): " + err);
        }
        HelperProcess h = new HelperProcess(p, socket, l, err);
        holder[0] = h;
        return h;
    }

    UnixHttp http() {
        return new UnixHttp(socket);
    }

    /** SIGTERM, then the exit code. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            return -1;
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop();
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
