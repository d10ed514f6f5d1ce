package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import spice.authority.os.SecureDirectory;

/**
 * Runs {@link ProbeMain} (or a plain command) in another process, optionally as another uid
 * ({@code setpriv --reuid=N --regid=N --clear-groups}; no passwd entry needed) and with
 * another umask. The classes are copied to a world-readable directory so that any uid can load
 * them; {@link #close()} deletes it.
 */
final class ChildJvm implements AutoCloseable {

    /** Exit code, standard output and standard error (the platform log line goes there). */
    record Result(int exit, String out, String err) {
        String line() {
            return out.strip();
        }

        @Override
        public String toString() {
            return "exit " + exit + ", stdout: " + out.strip() + ", stderr: " + err.strip();
        }
    }

    private final Path classpathRoot;
    private final String classpath;

    ChildJvm() throws IOException {
        classpathRoot = Files.createTempDirectory("spice-child-cp-");
        TestLibc.chmod(classpathRoot, 0755);
        List<String> entries = new ArrayList<>();
        int i = 0;
        for (Class<?> c : new Class<?>[] {ProbeMain.class, PosixSecureDirectory.class, SecureDirectory.class}) {
            Path src = codeSource(c);
            Path dst = classpathRoot.resolve(Integer.toString(i++) + (Files.isDirectory(src) ? "" : ".jar"));
            copyReadable(src, dst);
            entries.add(dst.toString());
        }
        classpath = String.join(":", entries);
    }

    static boolean setprivAvailable() {
        return Files.isExecutable(Path.of("/usr/bin/setpriv")) || Files.isExecutable(Path.of("/bin/setpriv"));
    }

    /** Runs ProbeMain; {@code uid} null keeps ours, {@code umask} null keeps ours. */
    Result probe(Integer uid, String umask, String... args) {
        return run(uid, umask, probeCommand(args));
    }

    /** The command line that runs ProbeMain with {@code args} (to run under a wrapper of one's own). */
    List<String> probeCommand(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:-UsePerfData", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xss512k",
                "--enable-native-access=ALL-UNNAMED", "-cp", classpath, ProbeMain.class.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    Process start(Integer uid, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:-UsePerfData", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED",
                "-cp", classpath, ProbeMain.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(wrap(uid, null, cmd)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** Runs an arbitrary command (for the attacker's actions). */
    static Result run(Integer uid, String umask, List<String> command) {
        try {
            Process p = new ProcessBuilder(wrap(uid, umask, command)).start();
            p.getOutputStream().close();
            CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> {
                try {
                    return p.getErrorStream().readAllBytes();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("child timed out: " + command);
            }
            return new Result(p.exitValue(), out, new String(err.join(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static void runOk(Integer uid, String... command) {
        Result r = run(uid, null, List.of(command));
        assertThat(r.exit()).as("%s: %s", List.of(command), r).isZero();
    }

    private static List<String> wrap(Integer uid, String umask, List<String> command) {
        List<String> cmd = new ArrayList<>();
        if (uid != null) {
            cmd.addAll(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups"));
        }
        if (umask != null) {
            cmd.addAll(List.of("/bin/sh", "-c", "umask " + umask + " && exec \"$0\" \"$@\""));
        }
        cmd.addAll(command);
        return cmd;
    }

    private static Path codeSource(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void copyReadable(Path src, Path dst) throws IOException {
        if (!Files.isDirectory(src)) {
            Files.copy(src, dst);
            TestLibc.chmod(dst, 0644);
            return;
        }
        Files.walkFileTree(src, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path d = dst.resolve(src.relativize(dir).toString());
                Files.createDirectories(d);
                TestLibc.chmod(d, 0755);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path f = dst.resolve(src.relativize(file).toString());
                Files.copy(file, f);
                TestLibc.chmod(f, 0644);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    @Override
    public void close() throws IOException {
        TestTree.deleteTree(classpathRoot);
    }
}
