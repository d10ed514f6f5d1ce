package spice.authority.app.install;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.app.install.InstallFixture.linux;
import static spice.authority.app.install.InstallFixture.linuxImage;
import static spice.authority.app.install.InstallFixture.run;
import static spice.authority.app.install.InstallFixture.tree;
import static spice.authority.app.install.InstallFixture.treeWithTimes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.app.install.InstallFixture.Recorder;
import spice.authority.app.install.InstallFixture.Run;

class InstallCommandTest {

    private static Path installed(Path home, String version) {
        return home.resolve(".local/share/spice-authority").resolve(version);
    }

    private static Path unit(Path home) {
        return home.resolve(".config/systemd/user/spice-authority.service");
    }

    @Test
    void installDryRun_listsEveryFileAndCommand_andWritesNothing(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        Recorder rec = new Recorder("running");
        Map<String, String> before = treeWithTimes(home);

        Run r = run(new InstallCommand(linux(home, rec)), "--user", "--dry-run", "--from", image.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        Path dir = installed(home, "0.1.0");
        assertThat(r.out().lines().toList()).contains(
                "install --user --dry-run: nothing is written and no command runs",
                "source    " + image + " (version 0.1.0)",
                "mkdir     " + home.resolve(".local"),
                "mkdir     " + dir.resolve("lib/runtime/bin"),
                "write     " + dir.resolve("bin/spice-authority"),
                "write     " + dir.resolve("lib/app/spice-authority.cfg"),
                "write     " + dir.resolve("lib/app/spice-authority.aot"),
                "write     " + dir.resolve("lib/app/quarkus-run.jar"),
                "write     " + dir.resolve("lib/app/lib/main/a.jar"),
                "write     " + dir.resolve("lib/runtime/lib/modules"),
                "write     " + dir.resolve("lib/runtime/bin/java"),
                "write     " + unit(home) + " (systemd user unit)",
                "link      " + home.resolve(".local/bin/spice-authority") + " -> " + dir.resolve("bin/spice-authority"),
                "write     " + home.resolve(".local/share/spice-authority/install-manifest") + " (install manifest)",
                "run       systemctl --user daemon-reload",
                "run       systemctl --user enable spice-authority.service",
                "run       systemctl --user restart spice-authority.service");
        assertThat(rec.commands).as("a dry run runs no command").isEmpty();
        assertThat(treeWithTimes(home)).isEqualTo(before);
    }

    @Test
    void install_intoTemporaryHome_writesImageUnitLinkAndManifest_andPrintsCommandsWhenNoUserSystemd(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        Recorder rec = new Recorder("offline");

        Run r = run(new InstallCommand(linux(home, rec)), "--user", "--from", image.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        Path dir = installed(home, "0.1.0");
        Path launcher = dir.resolve("bin/spice-authority");
        assertThat(Files.readString(unit(home))).isEqualTo("""
                [Unit]
                Description=spice-authority helper: per-user run authority for AI-agent hosts

                [Service]
                Type=simple
                ExecStart=%s serve
                # SIGTERM drains in-flight requests, zeroes the key and exits 0.
                KillSignal=SIGTERM
                TimeoutStopSec=20
                Restart=on-failure
                RestartSec=2

                [Install]
                WantedBy=default.target
                """.formatted(launcher));
        assertThat(Files.isExecutable(launcher)).isTrue();
        assertThat(Files.readSymbolicLink(home.resolve(".local/bin/spice-authority"))).isEqualTo(launcher);
        // The AOT cache is only valid with the jars' original modification times.
        assertThat(Files.getLastModifiedTime(dir.resolve("lib/app/quarkus-run.jar")))
                .isEqualTo(Files.getLastModifiedTime(image.resolve("lib/app/quarkus-run.jar")));
        assertThat(tree(dir)).isEqualTo(tree(image));
        List<String> manifest = Files.readAllLines(home.resolve(".local/share/spice-authority/install-manifest"));
        assertThat(manifest).contains("version\t0.1.0", "dir\t" + home.resolve(".local"),
                "file\t" + Manifest.sha256(Files.readAllBytes(unit(home))) + "\t" + unit(home),
                "link\t" + home.resolve(".local/bin/spice-authority") + "\t" + launcher);
        assertThat(rec.actions()).as("no user systemd: nothing but the query runs").isEmpty();
        assertThat(r.out()).contains("the service manager is not reachable from here; to start the helper now and at every login, run:\n"
                + "  systemctl --user daemon-reload\n  systemctl --user enable spice-authority.service\n  systemctl --user restart spice-authority.service\n");
    }

    /**
     * What the service manager runs at every login is the user's alone to change: a source built
     * group- or world-writable is installed without those rights (and the directories the install
     * creates are 0755 whatever the umask).
     */
    @Test
    void install_sourceWritableByOthers_installedWritableByTheUserOnly(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        java.nio.file.Files.setPosixFilePermissions(image.resolve("lib/app/lib/main/a.jar"),
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        java.nio.file.Files.setPosixFilePermissions(image.resolve("bin/spice-authority"),
                java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxr-x"));
        Path home = Files.createDirectory(tmp.resolve("home"));

        Run r = run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        Path dir = installed(home, "0.1.0");
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("lib/app/lib/main/a.jar")))).isEqualTo("rw-r--r--");
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("bin/spice-authority")))).isEqualTo("rwxr-xr-x");
        try (java.util.stream.Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.filter(Files::isDirectory).toList()) {
                assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(p)))
                        .as(p.toString()).isEqualTo("rwxr-xr-x");
            }
        }
    }

    @Test
    void install_userSystemdReachable_reloadsEnablesAndRestartsTheUnit(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        Recorder rec = new Recorder("running");

        Run r = run(new InstallCommand(linux(home, rec)), "--user", "--from", image.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(rec.actions()).containsExactly(
                List.of("systemctl", "--user", "daemon-reload"),
                List.of("systemctl", "--user", "enable", "spice-authority.service"),
                List.of("systemctl", "--user", "restart", "spice-authority.service"));
    }

    /**
     * The manifest is one entry per line and uninstall removes what it lists: a link target or a
     * name with a line break (which would forge an entry naming any file of the user's) is
     * refused before anything is written.
     */
    @Test
    void install_controlCharacterInANameOrLinkTarget_refused_andNothingChanged(@TempDir Path tmp) throws IOException {
        for (String which : List.of("link", "name")) {
            Path image = linuxImage(tmp.resolve("build-" + which), "0.1.0");
            if (which.equals("link")) {
                Files.createSymbolicLink(image.resolve("lib/forged"), Path.of("x\nfile\tabc\t" + tmp.resolve("victim")));
            } else {
                InstallFixture.write(image.resolve("lib/a\rb.jar"), "b", "rw-r--r--");
            }
            Path home = Files.createDirectory(tmp.resolve("home-" + which));
            Map<String, String> before = tree(home);

            Run r = run(new InstallCommand(linux(home, new Recorder("running"))), "--user", "--from", image.toString());

            assertThat(r.exitCode()).as(which).isEqualTo(1);
            assertThat(r.err()).as(which).contains("control character").doesNotContain("\n" + "file");
            assertThat(tree(home)).as(which + ": nothing changed").isEqualTo(before);
        }
    }

    @Test
    void install_twice_secondChangesNothingAndRunsNothing(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("running"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Map<String, String> after1 = treeWithTimes(home);

        Recorder rec = new Recorder("running", true);
        Run again = run(new InstallCommand(linux(home, rec)), "--user", "--from", image.toString());

        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).isEqualTo("spice-authority 0.1.0 is already installed in " + installed(home, "0.1.0") + "; nothing changed\n");
        assertThat(treeWithTimes(home)).isEqualTo(after1);
        assertThat(rec.actions()).isEmpty();
        Run dry = run(new InstallCommand(linux(home, rec)), "--user", "--dry-run", "--from", image.toString());
        assertThat(dry.out()).contains("unchanged 9 files and links").doesNotContain("write ").doesNotContain("run  ");
    }

    /** An install whose start failed (or a helper stopped since) is started by the next install. */
    @Test
    void install_twice_helperNotRunning_secondStartsIt_andWritesNothing(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Map<String, String> after1 = treeWithTimes(home);

        Recorder rec = new Recorder("running", false);
        Run again = run(new InstallCommand(linux(home, rec)), "--user", "--from", image.toString());

        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).startsWith("spice-authority 0.1.0 is already installed in " + installed(home, "0.1.0")
                + "; nothing changed\nthe helper is not running; starting it\n");
        assertThat(treeWithTimes(home)).isEqualTo(after1);
        assertThat(rec.actions()).containsExactly(
                List.of("systemctl", "--user", "daemon-reload"),
                List.of("systemctl", "--user", "enable", "spice-authority.service"),
                List.of("systemctl", "--user", "restart", "spice-authority.service"));
        assertThat(rec.active).isTrue();
    }

    /** A helper the service manager failed to stop keeps its files: nothing is removed under it. */
    @Test
    void uninstall_helperStillRunningAfterDisable_refused_andNothingRemoved(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("running"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Map<String, String> before = tree(home);
        Recorder rec = new Recorder("running", true);
        rec.stuck = true;

        Run r = run(new UninstallCommand(linux(home, rec)), "--user");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("spice-authority: refused: the helper still runs after systemctl --user disable --now "
                + "spice-authority.service; nothing was removed: stop it, then run uninstall again\n");
        assertThat(tree(home)).isEqualTo(before);
        assertThat(rec.actions()).containsExactly(List.of("systemctl", "--user", "disable", "--now", "spice-authority.service"));

        // An answer that says neither (an unexpected state) is not taken for "stopped" either.
        rec.stuck = false;
        rec.unknownState = "unknown";
        Run unsure = run(new UninstallCommand(linux(home, rec)), "--user");
        assertThat(unsure.exitCode()).isEqualTo(1);
        assertThat(unsure.err()).contains("the helper may still run after");
        assertThat(tree(home)).isEqualTo(before);

        rec.unknownState = null;
        Run retry = run(new UninstallCommand(linux(home, rec)), "--user");
        assertThat(retry.exitCode()).as(retry.err()).isZero();
        assertThat(retry.out()).contains("uninstalled spice-authority 0.1.0");
    }

    /**
     * Uninstall removes, and install replaces, what the manifest lists: an entry outside the places
     * install writes (an edited manifest) is refused before anything changes.
     */
    @Test
    void manifestEntryOutsideTheInstall_refusedByUninstallAndInstall_andNothingChanged(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Path victim = home.resolve(".bashrc");
        Files.writeString(victim, "mine\n", StandardCharsets.UTF_8);
        Path manifest = home.resolve(".local/share/spice-authority").resolve(Manifest.FILE_NAME);
        String original = Files.readString(manifest, StandardCharsets.UTF_8);
        String entry = original.lines().filter(l -> l.startsWith("file\t")).findFirst().orElseThrow();
        String hash = entry.split("\t")[1];
        Path sneaky = home.resolve(".local/share/spice-authority/../../../.bashrc");
        for (Path forged : List.of(victim, sneaky)) {
            Files.writeString(manifest, original + "file\t" + hash + "\t" + forged + "\n", StandardCharsets.UTF_8);
            Map<String, String> before = treeWithTimes(home);
            Recorder rec = new Recorder("running", true);

            Run un = run(new UninstallCommand(linux(home, rec)), "--user");
            Run in = run(new InstallCommand(linux(home, rec)), "--user", "--from", image.toString());

            for (Run r : List.of(un, in)) {
                assertThat(r.exitCode()).as(forged.toString()).isEqualTo(1);
                assertThat(r.err()).as(forged.toString()).isEqualTo("spice-authority: refused: " + forged + ": listed in the install manifest "
                        + manifest + " but not a place install writes (with this HOME and XDG_* settings); nothing was changed\n");
            }
            assertThat(treeWithTimes(home)).isEqualTo(before);
            assertThat(rec.actions()).isEmpty();
        }
        assertThat(victim).hasContent("mine");
    }

    @Test
    void install_foreignUnitFileInTheWay_refusedWithOneLine_andNothingChanged(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        InstallFixture.write(unit(home), "[Service]\nExecStart=/usr/bin/true\n", "rw-r--r--");
        Map<String, String> before = treeWithTimes(home);
        Recorder rec = new Recorder("running");

        Run r = run(new InstallCommand(linux(home, rec)), "--user", "--from", image.toString());

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("spice-authority: refused: " + unit(home)
                + ": exists and was not written by 'spice-authority install' (or was changed since); move it away and retry\n");
        assertThat(r.out()).isEmpty();
        assertThat(treeWithTimes(home)).isEqualTo(before);
        assertThat(rec.actions()).isEmpty();
    }

    @Test
    void install_installedFileChangedSince_refused_andNothingChanged(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Path jar = installed(home, "0.1.0").resolve("lib/app/quarkus-run.jar");
        Files.writeString(jar, "edited by hand");
        Path image2 = linuxImage(tmp.resolve("build2"), "0.1.0");
        InstallFixture.write(image2.resolve("lib/app/quarkus-run.jar"), "new jar", "rw-r--r--");
        Map<String, String> before = treeWithTimes(home);

        Run r = run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image2.toString());

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("spice-authority: refused: " + jar + ": exists and was not written").hasLineCount(1);
        assertThat(treeWithTimes(home)).isEqualTo(before);
    }

    @Test
    void install_newVersion_replacesTheOldOneAndPointsUnitAndLinkAtIt(@TempDir Path tmp) throws IOException {
        Path home = Files.createDirectory(tmp.resolve("home"));
        Path v1 = linuxImage(tmp.resolve("b1"), "0.1.0");
        Path v2 = linuxImage(tmp.resolve("b2"), "0.2.0");
        assertThat(run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", v1.toString()).exitCode()).isZero();
        Recorder rec = new Recorder("running");

        Run r = run(new InstallCommand(linux(home, rec)), "--user", "--from", v2.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(installed(home, "0.1.0")).doesNotExist();
        Path launcher = installed(home, "0.2.0").resolve("bin/spice-authority");
        assertThat(Files.readString(unit(home))).contains("ExecStart=" + launcher + " serve\n");
        assertThat(Files.readSymbolicLink(home.resolve(".local/bin/spice-authority"))).isEqualTo(launcher);
        assertThat(rec.actions()).contains(List.of("systemctl", "--user", "restart", "spice-authority.service"));
    }

    @Test
    void uninstall_afterInstall_leavesHomeExactlyAsBefore_andStopsTheUnit(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        // Things of the user's that neither install nor uninstall may touch.
        InstallFixture.write(home.resolve(".config/other/settings"), "x", "rw-------");
        InstallFixture.write(home.resolve(".local/bin/other-tool"), "#!/bin/sh\n", "rwxr-xr-x");
        InstallFixture.write(home.resolve(".local/state/spice-authority/authority/identity.key"), "key", "rw-------");
        Map<String, String> before = tree(home);
        assertThat(run(new InstallCommand(linux(home, new Recorder("running"))), "--user", "--from", image.toString()).exitCode()).isZero();
        assertThat(tree(home)).isNotEqualTo(before);

        Recorder rec = new Recorder("running");
        Run dry = run(new UninstallCommand(linux(home, rec)), "--user", "--dry-run");
        assertThat(dry.exitCode()).isZero();
        assertThat(dry.out().lines().toList()).contains(
                "run       systemctl --user disable --now spice-authority.service",
                "remove    " + unit(home),
                "remove    " + home.resolve(".local/bin/spice-authority"),
                "rmdir     " + home.resolve(".local/share/spice-authority") + " (when empty)",
                "run       systemctl --user daemon-reload");
        assertThat(rec.commands).isEmpty();

        Run r = run(new UninstallCommand(linux(home, rec)), "--user");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("uninstalled spice-authority 0.1.0 (9 files and links, 13 directories removed; the authority directory is kept)");
        assertThat(tree(home)).isEqualTo(before);
        assertThat(rec.actions()).containsExactly(
                List.of("systemctl", "--user", "disable", "--now", "spice-authority.service"),
                List.of("systemctl", "--user", "daemon-reload"));
        Run again = run(new UninstallCommand(linux(home, rec)), "--user");
        assertThat(again.out()).startsWith("nothing to uninstall: no install manifest at ");
    }

    @Test
    void uninstall_fileChangedSinceInstall_refused_andNothingRemoved(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Files.writeString(unit(home), "[Service]\nExecStart=/bin/true\n", StandardCharsets.UTF_8);
        Map<String, String> before = treeWithTimes(home);
        Recorder rec = new Recorder("running");

        Run r = run(new UninstallCommand(linux(home, rec)), "--user");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("spice-authority: refused: " + unit(home)
                + ": changed since 'spice-authority install' wrote it; move it away and retry\n");
        assertThat(treeWithTimes(home)).isEqualTo(before);
        assertThat(rec.commands).isEmpty();
    }

    @Test
    void uninstall_directoryHoldingUserFiles_keptWithNote(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", image.toString()).exitCode()).isZero();
        Path mine = home.resolve(".local/bin/mine");
        Files.writeString(mine, "mine");

        Run r = run(new UninstallCommand(linux(home, new Recorder("offline"))), "--user");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("kept: " + home.resolve(".local/bin") + " (not empty: holds files install did not write)");
        assertThat(mine).hasContent("mine");
        assertThat(home.resolve(".local/share/spice-authority")).doesNotExist();
    }

    @Test
    void install_notAnAppImage_refused(@TempDir Path tmp) throws IOException {
        Path home = Files.createDirectory(tmp.resolve("home"));
        Path notImage = Files.createDirectories(tmp.resolve("somewhere"));

        Run r = run(new InstallCommand(linux(home, new Recorder("offline"))), "--user", "--from", notImage.toString());

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("spice-authority: refused: " + notImage + ": not an app-image (no launcher "
                + notImage.resolve("bin/spice-authority") + ")\n");
        assertThat(tree(home)).containsOnlyKeys("");
    }

    @Test
    void install_withoutFromOutsideAnAppImage_refusedWithHowToBuild(@TempDir Path tmp) throws IOException {
        Path home = Files.createDirectory(tmp.resolve("home"));
        Run r = run(new InstallCommand(linux(home, new Recorder("offline"))), "--user");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("spice-authority: refused: not running from an app-image; pass --from DIR").hasLineCount(1);
    }

    @Test
    void install_defaultSource_isTheImageOfTheRunningLauncher(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        Environment env = new Environment(Map.of("HOME", home.toString()), Os.LINUX, 1000,
                Environment.imageOf(Os.LINUX, image.resolve("bin/spice-authority").toString()), new Recorder("offline"));

        Run r = run(new InstallCommand(env), "--user", "--dry-run");

        assertThat(r.out()).contains("source    " + image + " (version 0.1.0)");
    }

    @Test
    void install_withoutUser_isAUsageError(@TempDir Path tmp) {
        Run r = run(new InstallCommand(linux(tmp, new Recorder("offline"))));
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("spice-authority: only per-user installs exist: use 'install --user'\n");
    }

    @Test
    void install_honoursXdgDataAndConfigHome(@TempDir Path tmp) throws IOException {
        Path image = linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        Environment env = new Environment(Map.of("HOME", home.toString(), "XDG_DATA_HOME", tmp.resolve("data").toString(),
                "XDG_CONFIG_HOME", tmp.resolve("conf").toString()), Os.LINUX, 1000, java.util.Optional.empty(), new Recorder("offline"));

        Run r = run(new InstallCommand(env), "--user", "--from", image.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(tmp.resolve("data/spice-authority/0.1.0/bin/spice-authority")).exists();
        assertThat(tmp.resolve("conf/systemd/user/spice-authority.service")).exists();
        assertThat(Files.exists(home.resolve(".local/bin/spice-authority"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }
}
