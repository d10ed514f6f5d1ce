package spice.authority.app.install;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The app-image's Linux launcher (src/main/appimage/launcher-linux.sh) in a fake image whose
 * "java" prints the arguments it got, NUL-separated.
 */
@EnabledOnOs(OS.LINUX)
class LinuxLauncherTest {
    private static final Path LAUNCHER = Path.of("src/main/appimage/launcher-linux.sh").toAbsolutePath();
    private static final String CFG = """
            [Application]
            app.mainjar=$APPDIR/quarkus-run.jar
            app.classpath=$APPDIR/app/x.jar
            java-options=-Dnot-an-option-outside-JavaOptions

            [JavaOptions]
            java-options=-Djpackage.app-version=0.1.0
            java-options=--enable-native-access=ALL-UNNAMED
            java-options=-Xmn3m
            java-options=-XX:AOTCache=$APPDIR/spice-authority.aot""";

    @TempDir
    Path dir;

    /** A fake image under {@code parent}: launcher, cfg (no trailing newline), a recording java. */
    private Path image(Path parent) throws IOException {
        Path image = parent.resolve("spice-authority");
        InstallFixture.write(image.resolve("bin/spice-authority"), Files.readString(LAUNCHER), "rwxr-xr-x");
        InstallFixture.write(image.resolve("lib/app/spice-authority.cfg"), CFG, "rw-r--r--");
        InstallFixture.write(image.resolve("lib/runtime/bin/java"),
                "#!/bin/sh\necho $$ > \"${0%/*}/pid\"\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n",
                "rwxr-xr-x");
        return image;
    }

    /** Exit code, the arguments the fake java got, standard error, whether java replaced the launcher (exec). */
    private record Result(int code, List<String> args, String err, boolean execd) {}

    private Result run(Path cwd, String pathVar, String... argv) throws Exception {
        Path out = Files.createTempFile(dir, "out", "");
        Path err = Files.createTempFile(dir, "err", "");
        ProcessBuilder pb = new ProcessBuilder(argv).directory(cwd.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("PATH", pathVar);
        Process p = pb.start();
        try {
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("launcher finished").isTrue();
        } finally {
            p.destroyForcibly();
        }
        String s = Files.readString(out, StandardCharsets.UTF_8);
        List<String> args = s.isEmpty() ? List.of() : new ArrayList<>(Arrays.asList(s.split("\0", -1)));
        if (!args.isEmpty()) {
            args.removeLast(); // after the last NUL
        }
        Path pidFile = cwd.resolve(argv[0]).toRealPath().getParent().getParent().resolve("lib/runtime/bin/pid");
        boolean execd = Files.exists(pidFile) && Files.readString(pidFile).strip().equals(Long.toString(p.pid()));
        Files.deleteIfExists(pidFile);
        return new Result(p.exitValue(), args, Files.readString(err, StandardCharsets.UTF_8), execd);
    }

    private static List<String> jvmPart(Path image) {
        String app = image.resolve("lib/app").toString();
        return List.of("-Djpackage.app-path=" + image.resolve("bin/spice-authority"),
                "-Djpackage.app-version=0.1.0", "--enable-native-access=ALL-UNNAMED", "-Xmn3m",
                "-XX:AOTCache=" + app + "/spice-authority.aot", "-jar", app + "/quarkus-run.jar");
    }

    @Test
    void passesJvmOptionsOfTheJavaOptionsSectionThenTheCallersArgumentsUntouched() throws Exception {
        Path image = image(dir.resolve("with space"));
        String[] user = {"serve", "--socket", "/tmp/a b/s.sock", "", "*", "$APPDIR", "-jar", "x\ny", "'\"\\"};
        List<String> argv = new ArrayList<>(List.of(image.resolve("bin/spice-authority").toString()));
        argv.addAll(List.of(user));
        Result r = run(dir, System.getenv("PATH"), argv.toArray(String[]::new));

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.execd()).as("java replaces the launcher's process").isTrue();
        List<String> expected = new ArrayList<>(jvmPart(image));
        expected.addAll(List.of(user));
        assertThat(r.args()).containsExactlyElementsOf(expected);
    }

    @Test
    void resolvesASymbolicLinkAndARelativeStartToTheImagesAbsolutePaths() throws Exception {
        Path image = image(dir.resolve("share"));
        Path bin = Files.createDirectories(dir.resolve("home/.local/bin"));
        Files.createSymbolicLink(bin.resolve("spice-authority"), image.resolve("bin/spice-authority"));

        Result viaLink = run(dir, System.getenv("PATH"), bin.resolve("spice-authority").toString(), "status");
        assertThat(viaLink.code()).as(viaLink.err()).isZero();
        assertThat(viaLink.args()).startsWith(jvmPart(image).toArray(String[]::new)).endsWith("status");

        Result relative = run(image, System.getenv("PATH"), "bin/spice-authority", "status");
        assertThat(relative.code()).as(relative.err()).isZero();
        assertThat(relative.args()).startsWith(jvmPart(image).toArray(String[]::new));
    }

    @Test
    void runsNoProgramFoundThroughPath() throws Exception {
        // jpackage's own Linux launcher runs 'rpm -qf' and 'dpkg -S' through sh on every start.
        Path image = image(dir.resolve("img"));
        Path trap = Files.createDirectories(dir.resolve("trap"));
        Path calls = dir.resolve("calls");
        for (String tool : List.of("rpm", "dpkg", "readlink", "dirname", "basename", "sed", "cat", "realpath", "java", "sh")) {
            InstallFixture.write(trap.resolve(tool), "#!/bin/sh\necho " + tool + " >> '" + calls + "'\nexit 1\n", "rwxr-xr-x");
        }
        Path link = dir.resolve("link");
        Files.createSymbolicLink(link, image.resolve("bin/spice-authority"));

        Result direct = run(dir, trap.toString(), image.resolve("bin/spice-authority").toString(), "--version");
        Result viaLink = run(dir, trap.toString(), link.toString(), "--version");

        assertThat(direct.code()).as(direct.err()).isZero();
        assertThat(viaLink.code()).as(viaLink.err()).isZero();
        assertThat(viaLink.args()).startsWith(jvmPart(image).toArray(String[]::new));
        assertThat(calls).doesNotExist();
    }

    @Test
    void refusesAnIncompleteImageNamingIt() throws Exception {
        Path image = image(dir.resolve("img"));
        Files.delete(image.resolve("lib/runtime/bin/java"));

        Result r = run(dir, System.getenv("PATH"), image.resolve("bin/spice-authority").toString(), "serve");

        assertThat(r.code()).isEqualTo(1);
        assertThat(r.args()).isEmpty();
        assertThat(r.err()).contains(image.toString()).contains("not a complete app-image");
    }

    @Test
    void readsEveryAppdirOfAnOption_crlfLines_andAnInstallPathThatContainsAppdirLiterally() throws Exception {
        Path image = image(dir.resolve("odd $APPDIR dir"));
        InstallFixture.write(image.resolve("lib/app/spice-authority.cfg"),
                "[JavaOptions]\r\njava-options=-Xmn3m\r\njava-options=-Dboth=$APPDIR/x:$APPDIR/y\r\n", "rw-r--r--");

        Result r = run(dir, System.getenv("PATH"), image.resolve("bin/spice-authority").toString(), "status");

        String app = image.resolve("lib/app").toString();
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.args()).containsExactly("-Djpackage.app-path=" + image.resolve("bin/spice-authority"), "-Xmn3m",
                "-Dboth=" + app + "/x:" + app + "/y", "-jar", app + "/quarkus-run.jar", "status");
    }

    @Test
    void namesTheImageThatRunsWhenStartedThroughDotDotAndALinkedParent() throws Exception {
        // 'l/../img' is text for 'img' but the path for 'real/img' when l -> real/deep.
        Path realImage = image(dir.resolve("real"));
        Files.createDirectories(dir.resolve("real/deep"));
        Files.createSymbolicLink(dir.resolve("l"), dir.resolve("real/deep"));
        image(dir); // the decoy, where the text points

        Result r = run(dir, System.getenv("PATH"), dir + "/l/../spice-authority/bin/spice-authority", "status");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.args()).startsWith(jvmPart(realImage.toRealPath()).toArray(String[]::new));
    }

    @Test
    void refusesACfgWithoutJavaOptionsOrThatCannotBeRead() throws Exception {
        Path image = image(dir.resolve("img"));
        InstallFixture.write(image.resolve("lib/app/spice-authority.cfg"), "[Application]\napp.mainjar=$APPDIR/x.jar\n",
                "rw-r--r--");
        Result none = run(dir, System.getenv("PATH"), image.resolve("bin/spice-authority").toString(), "serve");
        assertThat(none.code()).isNotZero();
        assertThat(none.args()).isEmpty();
        assertThat(none.err()).contains("has no [JavaOptions]");

        Files.delete(image.resolve("lib/app/spice-authority.cfg"));
        Files.createDirectory(image.resolve("lib/app/spice-authority.cfg"));
        Result unreadable = run(dir, System.getenv("PATH"), image.resolve("bin/spice-authority").toString(), "serve");
        assertThat(unreadable.code()).isNotZero();
        assertThat(unreadable.args()).isEmpty();
    }
}
