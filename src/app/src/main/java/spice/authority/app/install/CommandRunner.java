package spice.authority.app.install;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs an external command (systemctl, launchctl, schtasks). Tests substitute a recorder so that
 * nothing reaches the real user's service manager.
 */
@FunctionalInterface
public interface CommandRunner {

    /** Exit code and standard output (trimmed) of one command. */
    record Result(int exitCode, String out) {}

    Result run(List<String> argv);

    /** The real runner: standard error is discarded, 60 s per command, exit 127 if absent. */
    static CommandRunner system() {
        return argv -> {
            ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(false)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).redirectInput(ProcessBuilder.Redirect.from(nullFile()));
            Process p = null;
            try {
                p = pb.start();
                // Standard output is read on its own thread, so a child that hangs with it open
                // still times out (and is killed below, which ends the read).
                java.io.InputStream stdout = p.getInputStream();
                java.util.concurrent.CompletableFuture<byte[]> out = new java.util.concurrent.CompletableFuture<>();
                Thread.ofVirtual().start(() -> {
                    try {
                        out.complete(stdout.readAllBytes());
                    } catch (IOException e) {
                        out.complete(new byte[0]);
                    }
                });
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    return new Result(124, "");
                }
                byte[] bytes = out.get(10, TimeUnit.SECONDS);
                return new Result(p.exitValue(), new String(bytes, StandardCharsets.UTF_8).strip());
            } catch (IOException e) {
                return new Result(127, "");
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                return new Result(124, "");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Result(130, "");
            } finally {
                if (p != null) {
                    p.destroyForcibly();
                }
            }
        };
    }

    private static java.io.File nullFile() {
        return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }
}
