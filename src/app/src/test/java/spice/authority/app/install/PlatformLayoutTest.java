package spice.authority.app.install;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.app.install.InstallFixture.run;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import spice.authority.app.install.InstallFixture.Recorder;
import spice.authority.app.install.InstallFixture.Run;

/** Generated registration files per platform (macOS and Windows: content only; they cannot run here). */
class PlatformLayoutTest {

    @Test
    void systemdUnit_passesSystemdAnalyzeVerify(@TempDir Path tmp) throws Exception {
        Path image = InstallFixture.linuxImage(tmp.resolve("build"), "0.1.0");
        Path home = Files.createDirectory(tmp.resolve("home"));
        assertThat(run(new InstallCommand(InstallFixture.linux(home, new Recorder("offline"))), "--user", "--from", image.toString())
                .exitCode()).isZero();
        Path unit = home.resolve(".config/systemd/user/spice-authority.service");
        Process p;
        try {
            // System mode: --user needs a running user manager, which a build machine may lack; the
            // unit syntax and the ExecStart check are the same.
            p = new ProcessBuilder("systemd-analyze", "verify", unit.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("systemd-analyze is not available here: the unit file was not verified");
            return;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).as("no warnings").isEmpty();
    }

    /** What the service manager's answer means: running, stopped, or cannot tell (never a guess). */
    @Test
    void helperRunning_readsTheServiceManagersAnswer(@TempDir Path home) throws InstallRefusedException {
        for (var c : List.of(
                Map.entry(new CommandRunner.Result(0, "active"), Optional.of(true)),
                Map.entry(new CommandRunner.Result(0, "reloading"), Optional.of(true)),
                Map.entry(new CommandRunner.Result(3, "deactivating"), Optional.of(true)),
                Map.entry(new CommandRunner.Result(3, "inactive"), Optional.of(false)),
                Map.entry(new CommandRunner.Result(3, "failed"), Optional.of(false)),
                Map.entry(new CommandRunner.Result(127, ""), Optional.<Boolean>empty()),
                Map.entry(new CommandRunner.Result(1, "Failed to connect to bus"), Optional.<Boolean>empty()))) {
            CommandRunner answer = argv -> argv.equals(List.of("systemctl", "--user", "is-active", "spice-authority.service"))
                    ? c.getKey() : new CommandRunner.Result(99, "");
            assertThat(new LinuxLayout(InstallFixture.linux(home, answer)).helperRunning()).as(c.getKey().toString()).isEqualTo(c.getValue());
        }
        for (var c : List.of(
                Map.entry(new CommandRunner.Result(0, "gui/501/spice-authority = {\n\tstate = running\n}"), Optional.of(true)),
                Map.entry(new CommandRunner.Result(0, "gui/501/spice-authority = {\n\tstate = not running\n}"), Optional.of(false)),
                Map.entry(new CommandRunner.Result(113, "Could not find service"), Optional.of(false)),
                Map.entry(new CommandRunner.Result(5, "Bootstrap failed: 5: Input/output error"), Optional.<Boolean>empty()),
                Map.entry(new CommandRunner.Result(127, ""), Optional.<Boolean>empty()))) {
            CommandRunner answer = argv -> argv.size() == 3 && argv.get(1).equals("print") && argv.get(2).startsWith("gui/501/")
                    ? c.getKey() : new CommandRunner.Result(99, "");
            Environment mac = new Environment(Map.of("HOME", home.toString()), Os.MACOS, 501, Optional.empty(), answer);
            assertThat(new MacLayout(mac).helperRunning()).as(c.getKey().toString()).isEqualTo(c.getValue());
        }
    }

    @Test
    void execStart_pathWithSpacesAndPercent_isQuotedAndEscaped() {
        assertThat(LinuxLayout.execArg("/home/a b/100%/x$y")).isEqualTo("\"/home/a b/100%%/x$$y\"");
        assertThat(LinuxLayout.execArg("/home/ab/bin/spice-authority")).isEqualTo("/home/ab/bin/spice-authority");
    }

    @Test
    void macos_dryRun_plistInLaunchAgents_andLaunchctlBootstrap(@TempDir Path tmp) throws IOException {
        Path app = tmp.resolve("build/spice-authority.app");
        InstallFixture.write(app.resolve("Contents/MacOS/spice-authority"), "#!/bin/sh\n", "rwxr-xr-x");
        InstallFixture.write(app.resolve("Contents/app/spice-authority.cfg"), "[JavaOptions]\njava-options=-Djpackage.app-version=0.1.0\n", "rw-r--r--");
        InstallFixture.write(app.resolve("Contents/runtime/Contents/Home/lib/modules"), "m", "rw-r--r--");
        Path home = Files.createDirectory(tmp.resolve("Users me"));
        Recorder rec = new Recorder("offline");
        Environment env = new Environment(Map.of("HOME", home.toString()), Os.MACOS, 501,
                Environment.imageOf(Os.MACOS, app.resolve("Contents/MacOS/spice-authority").toString()), rec);

        Run r = run(new InstallCommand(env), "--user", "--dry-run");

        assertThat(r.exitCode()).as(r.err()).isZero();
        Path bundle = home.resolve("Library/Application Support/spice-authority/0.1.0/spice-authority.app");
        Path plist = home.resolve("Library/LaunchAgents/spice-authority.plist");
        assertThat(r.out().lines().toList()).contains(
                "source    " + app + " (version 0.1.0)",
                "write     " + bundle.resolve("Contents/MacOS/spice-authority"),
                "write     " + plist + " (launchd agent)",
                "run       launchctl bootout gui/501/spice-authority",
                "run       launchctl bootstrap gui/501 '" + plist + "'");
        assertThat(rec.commands).isEmpty();
    }

    @Test
    void macos_plist_isWellFormedAndRunsServeAtLoadWithRestartOnFailure() throws Exception {
        String xml = MacLayout.plist(Path.of("/Users/a&b/Library/Application Support/spice-authority/0.1.0/spice-authority.app/Contents/MacOS/spice-authority"));
        Document d = parse(xml.getBytes(StandardCharsets.UTF_8));
        assertThat(d.getDocumentElement().getTagName()).isEqualTo("plist");
        assertThat(xml).contains("<key>Label</key>\n  <string>spice-authority</string>")
                .contains("<string>/Users/a&amp;b/Library/Application Support/spice-authority/0.1.0/spice-authority.app/Contents/MacOS/spice-authority</string>\n    <string>serve</string>")
                .contains("<key>RunAtLoad</key>\n  <true/>")
                .contains("<key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>");
    }

    @Test
    void windows_dryRun_taskXmlUnderLocalAppData_andSchtasks(@TempDir Path tmp) throws IOException {
        Path image = tmp.resolve("build/spice-authority");
        InstallFixture.write(image.resolve("spice-authority.exe"), "MZ", "rwxr-xr-x");
        InstallFixture.write(image.resolve("app/spice-authority.cfg"), "[JavaOptions]\njava-options=-Djpackage.app-version=0.1.0\n", "rw-r--r--");
        Path local = Files.createDirectories(tmp.resolve("AppData/Local"));
        Recorder rec = new Recorder("offline");
        Environment env = new Environment(Map.of("USERPROFILE", tmp.toString(), "LOCALAPPDATA", local.toString(), "USERNAME", "me"),
                Os.WINDOWS, -1, Optional.empty(), rec);

        Run r = run(new InstallCommand(env), "--user", "--dry-run", "--from", image.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        Path root = local.resolve("Programs/spice-authority");
        assertThat(r.out().lines().toList()).contains(
                "write     " + root.resolve("0.1.0/spice-authority.exe"),
                "write     " + root.resolve("spice-authority-task.xml") + " (scheduled task definition)",
                "run       schtasks /Create /TN spice-authority /XML " + root.resolve("spice-authority-task.xml") + " /F",
                "run       schtasks /Run /TN spice-authority");
        assertThat(rec.commands).isEmpty();
    }

    @Test
    void windows_taskXml_isUtf16WithBom_wellFormed_logonTriggerRestartOnFailure() throws Exception {
        Path launcher = Path.of("/C:/Users/me/AppData/Local/Programs/spice-authority/0.1.0/spice-authority.exe");
        String xml = WindowsLayout.taskXml(launcher, Optional.of("DESKTOP\\me"));
        byte[] bytes = WindowsLayout.utf16(xml);
        assertThat(bytes[0]).isEqualTo((byte) 0xFF);
        assertThat(bytes[1]).isEqualTo((byte) 0xFE);
        Document d = parse(bytes);
        assertThat(d.getDocumentElement().getTagName()).isEqualTo("Task");
        assertThat(d.getElementsByTagName("Command").item(0).getTextContent()).isEqualTo(launcher.toString());
        assertThat(d.getElementsByTagName("Arguments").item(0).getTextContent()).isEqualTo("serve");
        assertThat(d.getElementsByTagName("UserId").item(0).getTextContent()).isEqualTo("DESKTOP\\me");
        assertThat(d.getElementsByTagName("LogonTrigger").getLength()).isEqualTo(1);
        assertThat(d.getElementsByTagName("RestartOnFailure").item(0).getTextContent()).contains("PT1M").contains("3");
        assertThat(d.getElementsByTagName("ExecutionTimeLimit").item(0).getTextContent()).isEqualTo("PT0S");
    }

    @Test
    void imageOf_launcherPaths_perPlatform() {
        assertThat(Environment.imageOf(Os.LINUX, "/opt/x/spice-authority/bin/spice-authority")).contains(Path.of("/opt/x/spice-authority"));
        assertThat(Environment.imageOf(Os.MACOS, "/A/spice-authority.app/Contents/MacOS/spice-authority")).contains(Path.of("/A/spice-authority.app"));
        assertThat(Environment.imageOf(Os.LINUX, null)).isEmpty();
        assertThat(Environment.imageOf(Os.LINUX, "")).isEmpty();
    }

    @Test
    void steps_display_quotesOnlyWhatNeedsIt() {
        assertThat(PlatformLayout.Step.of("launchctl", "bootstrap", "gui/501", "/Users/a b/x.plist").display())
                .isEqualTo("launchctl bootstrap gui/501 '/Users/a b/x.plist'");
        assertThat(List.of(PlatformLayout.Step.tolerant("a").mayFail())).containsExactly(true);
    }

    private static Document parse(byte[] xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", false);
        f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        return f.newDocumentBuilder().parse(new ByteArrayInputStream(xml));
    }
}
