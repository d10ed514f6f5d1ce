package spice.authority.app.install;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Windows: the app-image in {@code %LOCALAPPDATA%\Programs\spice-authority\VERSION\} and a
 * scheduled task "spice-authority" (at logon of this user, restarted on failure) registered from
 * {@code spice-authority-task.xml} kept in the install root. No PATH change.
 */
final class WindowsLayout implements PlatformLayout {
    static final String TASK = NAME;
    private final Environment env;

    WindowsLayout(Environment env) throws InstallRefusedException {
        this.env = env;
        if (env.absolute("LOCALAPPDATA").isEmpty()) {
            throw new InstallRefusedException("LOCALAPPDATA is not set to an absolute path");
        }
    }

    @Override
    public Path installRoot() {
        return env.absolute("LOCALAPPDATA").orElseThrow().resolve("Programs").resolve(NAME);
    }

    Path taskXml() {
        return installRoot().resolve(NAME + "-task.xml");
    }

    @Override
    public Path launcherIn(Path image) {
        return image.resolve(NAME + ".exe");
    }

    @Override
    public Path cfgIn(Path image) {
        return image.resolve("app").resolve(NAME + ".cfg");
    }

    @Override
    public List<GeneratedFile> registration(Path installedLauncher) {
        return List.of(new GeneratedFile(taskXml(), utf16(taskXml(installedLauncher, user())), "scheduled task definition"));
    }

    private Optional<String> user() {
        String name = env.vars().get("USERNAME");
        if (name == null || name.isEmpty()) {
            return Optional.empty();
        }
        String domain = env.vars().get("USERDOMAIN");
        return Optional.of(domain == null || domain.isEmpty() ? name : domain + "\\" + name);
    }

    /** schtasks reads task XML as UTF-16 (little-endian, with a byte-order mark). */
    static byte[] utf16(String s) {
        ByteBuffer b = StandardCharsets.UTF_16LE.encode(s);
        byte[] out = new byte[2 + b.remaining()];
        out[0] = (byte) 0xFF;
        out[1] = (byte) 0xFE;
        b.get(out, 2, out.length - 2);
        return out;
    }

    static String taskXml(Path launcher, Optional<String> user) {
        String userId = user.map(u -> "<UserId>" + Xml.escape(u) + "</UserId>").orElse("");
        return """
                <?xml version="1.0" encoding="UTF-16"?>
                <Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
                  <RegistrationInfo>
                    <Description>spice-authority helper: per-user run authority for AI-agent hosts</Description>
                  </RegistrationInfo>
                  <Triggers>
                    <LogonTrigger>
                      <Enabled>true</Enabled>
                      %s
                    </LogonTrigger>
                  </Triggers>
                  <Principals>
                    <Principal id="Author">
                      %s
                      <LogonType>InteractiveToken</LogonType>
                      <RunLevel>LeastPrivilege</RunLevel>
                    </Principal>
                  </Principals>
                  <Settings>
                    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
                    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
                    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
                    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
                    <RestartOnFailure>
                      <Interval>PT1M</Interval>
                      <Count>3</Count>
                    </RestartOnFailure>
                    <Enabled>true</Enabled>
                  </Settings>
                  <Actions Context="Author">
                    <Exec>
                      <Command>%s</Command>
                      <Arguments>serve</Arguments>
                    </Exec>
                  </Actions>
                </Task>
                """.formatted(userId, userId, Xml.escape(launcher.toString()));
    }

    @Override
    public List<Link> links(Path installedLauncher) {
        return List.of();
    }

    @Override
    public boolean serviceManagerReachable() {
        return env.commands().run(List.of("schtasks", "/Query", "/TN", "\\")).exitCode() == 0;
    }

    /** Not asked: {@code schtasks /Query} words its status in the system's language. */
    @Override
    public Optional<Boolean> helperRunning() {
        return Optional.empty();
    }

    @Override
    public boolean asksWhetherRunning() {
        return false;
    }

    @Override
    public List<Step> activate(Path installedLauncher) {
        return List.of(
                Step.of("schtasks", "/Create", "/TN", TASK, "/XML", taskXml().toString(), "/F"),
                Step.tolerant("schtasks", "/End", "/TN", TASK),
                Step.of("schtasks", "/Run", "/TN", TASK));
    }

    @Override
    public List<Step> deactivate() {
        return List.of(
                Step.tolerant("schtasks", "/End", "/TN", TASK),
                Step.tolerant("schtasks", "/Delete", "/TN", TASK, "/F"));
    }

    @Override
    public List<Step> afterRemoval() {
        return List.of();
    }
}
