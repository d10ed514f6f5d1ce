package spice.authority.app.install;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import spice.authority.app.cli.Cli;

/** A fake app-image, a temporary HOME, a recording command runner and an in-process CLI run. */
final class InstallFixture {
    private InstallFixture() {}

    /** Exit code and output of one command run. */
    record Run(int exitCode, String out, String err) {}

    /**
     * Records every external command; answers {@code is-system-running} with {@code systemdState},
     * and {@code is-active} from the unit's state, which {@code restart} sets and
     * {@code disable --now} clears (unless {@code stuck}: a unit that does not stop).
     */
    static final class Recorder implements CommandRunner {
        private static final List<String> REACHABILITY = List.of("systemctl", "--user", "is-system-running");
        private static final List<String> IS_ACTIVE = List.of("systemctl", "--user", "is-active", "spice-authority.service");

        final List<List<String>> commands = Collections.synchronizedList(new ArrayList<>());
        final String systemdState;
        volatile boolean active;
        volatile boolean stuck;
        /** When set, what {@code is-active} answers instead (a state that says neither running nor stopped). */
        volatile String unknownState;

        Recorder(String systemdState) {
            this(systemdState, false);
        }

        Recorder(String systemdState, boolean active) {
            this.systemdState = systemdState;
            this.active = active;
        }

        @Override
        public Result run(List<String> argv) {
            commands.add(List.copyOf(argv));
            if (argv.equals(REACHABILITY)) {
                return new Result(systemdState.equals("running") ? 0 : 1, systemdState);
            }
            if (argv.equals(IS_ACTIVE)) {
                String odd = unknownState;
                if (odd != null) {
                    return new Result(4, odd);
                }
                return active ? new Result(0, "active") : new Result(3, "inactive");
            }
            if (argv.size() > 2 && argv.get(2).equals("restart")) {
                active = true;
            } else if (argv.size() > 3 && argv.get(2).equals("disable") && argv.get(3).equals("--now") && !stuck) {
                active = false;
            }
            return new Result(0, "");
        }

        /** The commands other than the queries (reachability, is-active). */
        List<List<String>> actions() {
            return commands.stream().filter(c -> !c.equals(REACHABILITY) && !c.equals(IS_ACTIVE)).toList();
        }
    }

    static Environment linux(Path home, CommandRunner runner) {
        return new Environment(Map.of("HOME", home.toString()), Os.LINUX, 1000, Optional.empty(), runner);
    }

    /** A small Linux app-image tree: launcher, cfg with the version, jars, a runtime file, an AOT cache. */
    static Path linuxImage(Path dir, String version) throws IOException {
        Path image = dir.resolve("spice-authority");
        write(image.resolve("bin/spice-authority"), "#!/bin/sh\nexit 0\n", "rwxr-xr-x");
        write(image.resolve("lib/app/spice-authority.cfg"), "[Application]\napp.mainjar=$APPDIR/quarkus-run.jar\n\n[JavaOptions]\n"
                + "java-options=-Djpackage.app-version=" + version + "\njava-options=-XX:AOTCache=$APPDIR/spice-authority.aot\n", "rw-r--r--");
        write(image.resolve("lib/app/quarkus-run.jar"), "jar " + version, "rw-r--r--");
        write(image.resolve("lib/app/lib/main/a.jar"), "a", "rw-r--r--");
        write(image.resolve("lib/app/spice-authority.aot"), "aot " + version, "rw-r--r--");
        write(image.resolve("lib/runtime/lib/modules"), "modules", "rw-r--r--");
        write(image.resolve("lib/runtime/bin/java"), "#!/bin/sh\n", "rwxr-xr-x");
        return image;
    }

    static void write(Path p, String content, String mode) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, content, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
    }

    /** Runs a command object through picocli with the CLI's conventions. */
    static Run run(Callable<Integer> command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Cli.configure(new CommandLine(command));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /** Every entry below {@code root}: type, mode, size (files) or target (links). */
    static Map<String, String> tree(Path root) throws IOException {
        Map<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
                String v;
                if (Files.isSymbolicLink(p)) {
                    v = "link " + Files.readSymbolicLink(p);
                } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    v = "dir " + mode;
                } else {
                    v = "file " + mode + " " + Files.size(p);
                }
                m.put(root.relativize(p).toString(), v);
            }
        }
        return m;
    }

    /** Like {@link #tree} plus modification times (an unchanged re-install touches nothing). */
    static Map<String, String> treeWithTimes(Path root) throws IOException {
        Map<String, String> m = tree(root);
        for (Map.Entry<String, String> e : m.entrySet()) {
            Path p = root.resolve(e.getKey());
            e.setValue(e.getValue() + " " + Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).toMillis());
        }
        return m;
    }
}
