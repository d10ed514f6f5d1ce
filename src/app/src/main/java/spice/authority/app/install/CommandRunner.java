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
            try {
                Process p = pb.start();
                byte[] out = p.getInputStream().readAllBytes();
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return new Result(124, "");
                }
                return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8).strip());
            } catch (IOException e) {
                return new Result(127, "");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Result(130, "");
            }
        };
    }

    private static java.io.File nullFile() {
        return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }
}
