package spice.authority.app.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link TestHost} running as its own process. */
final class HostProcess implements AutoCloseable {
    final Process process;
    private final PrintWriter in;
    private final BufferedReader out;

    HostProcess(Path socket) throws IOException {
        String cp = Path.of("target/test-classes").toAbsolutePath().toString();
        process = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", cp, TestHost.class.getName(),
                socket.toString())).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Sends one command and returns the host's answer: {@code <status> <body>}. */
    String send(String command) throws IOException {
        in.println(command);
        String line = out.readLine();
        if (line == null) {
            throw new IOException("host exited");
        }
        return line;
    }

    long pid() {
        return process.pid();
    }

    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            in.println("quit");
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
