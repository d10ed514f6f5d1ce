package spice.authority.app.install;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The real {@link CommandRunner} ({@link CommandRunner#system()}): standard error is discarded,
 * {@link #DEFAULT_TIMEOUT} per command, exit 127 if absent, 124 on a timeout; the command and
 * every process it started that is still its descendant are killed once it returns. The timeout is a parameter only so that
 * tests need not wait a minute.
 *
 * <p>SECURITY: a bare command name is looked up in the system's own directories
 * ({@link #SYSTEM_DIRS}; on Windows {@code %SystemRoot%\System32}), never in {@code PATH}: a
 * directory early in the user's {@code PATH} (often {@code ~/.local/bin}) must not decide which
 * {@code systemctl} registers what runs at every login. A name found in none of them is absent
 * (127).
 */
final class SystemCommandRunner implements CommandRunner {
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** Where bare names are looked up on Linux and macOS, in this order (the last: NixOS). */
    static final List<String> SYSTEM_DIRS = List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/run/current-system/sw/bin");

    private final Duration timeout;

    SystemCommandRunner(Duration timeout) {
        this.timeout = timeout;
    }

    Duration timeout() {
        return timeout;
    }

    @Override
    public Result run(List<String> argv) {
        Optional<String> program = resolve(argv.getFirst());
        if (program.isEmpty()) {
            return new Result(127, "");
        }
        List<String> resolved = new java.util.ArrayList<>(argv);
        resolved.set(0, program.get());
        ProcessBuilder pb = new ProcessBuilder(resolved).redirectErrorStream(false)
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
            if (!p.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
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
                // The whole tree: a child the command started would otherwise outlive it (adopted
                // by init) and keep the output pipe, and so the reader thread, open. Descendants are
                // listed before the command is killed, while they are still its descendants. (A
                // command that already exited on its own has orphaned its children: they are not
                // found here; one that keeps standard output open makes the result a timeout.)
                List<ProcessHandle> tree = p.descendants().toList();
                p.destroyForcibly();
                tree.forEach(ProcessHandle::destroyForcibly);
            }
        }
    }

    /** An absolute or relative path as given; a bare name from the system's directories only. */
    static Optional<String> resolve(String name) {
        if (name.isEmpty() || name.contains("/") || name.contains("\\")) {
            return name.isEmpty() ? Optional.empty() : Optional.of(name);
        }
        if (System.getProperty("os.name").startsWith("Windows")) {
            String root = System.getenv("SystemRoot");
            Path dir = Path.of(root != null && Path.of(root).isAbsolute() ? root : "C:\\Windows", "System32");
            Path exe = dir.resolve(name.toLowerCase(java.util.Locale.ROOT).endsWith(".exe") ? name : name + ".exe");
            return Files.isRegularFile(exe) ? Optional.of(exe.toString()) : Optional.empty();
        }
        for (String d : SYSTEM_DIRS) {
            Path p = Path.of(d, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p.toString());
            }
        }
        return Optional.empty();
    }

    private static java.io.File nullFile() {
        return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }
}
