package spice.authority.app.install;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * macOS: the app bundle in {@code ~/Library/Application Support/spice-authority/VERSION/},
 * a symbolic link {@code ~/.local/bin/spice-authority}, and a launchd agent
 * {@code ~/Library/LaunchAgents/spice-authority.plist} (run at load, restarted when it fails).
 */
final class MacLayout implements PlatformLayout {
    static final String LABEL = NAME;
    private final Environment env;
    private final Path home;

    MacLayout(Environment env) throws InstallRefusedException {
        this.env = env;
        this.home = env.home();
    }

    @Override
    public Path installRoot() {
        return home.resolve("Library/Application Support").resolve(NAME);
    }

    @Override
    public Path imageDir(String version) {
        return installRoot().resolve(version).resolve(NAME + ".app");
    }

    Path plist() {
        return home.resolve("Library/LaunchAgents").resolve(LABEL + ".plist");
    }

    @Override
    public Path launcherIn(Path image) {
        return image.resolve("Contents/MacOS").resolve(NAME);
    }

    @Override
    public Path cfgIn(Path image) {
        return image.resolve("Contents/app").resolve(NAME + ".cfg");
    }

    @Override
    public List<GeneratedFile> registration(Path installedLauncher) {
        return List.of(new GeneratedFile(plist(), plist(installedLauncher).getBytes(StandardCharsets.UTF_8), "launchd agent"));
    }

    static String plist(Path launcher) {
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                  <key>Label</key>
                  <string>%s</string>
                  <key>ProgramArguments</key>
                  <array>
                    <string>%s</string>
                    <string>serve</string>
                  </array>
                  <key>RunAtLoad</key>
                  <true/>
                  <key>KeepAlive</key>
                  <dict>
                    <key>SuccessfulExit</key>
                    <false/>
                  </dict>
                  <key>ProcessType</key>
                  <string>Background</string>
                </dict>
                </plist>
                """.formatted(LABEL, Xml.escape(launcher.toString()));
    }

    @Override
    public List<Link> links(Path installedLauncher) {
        return List.of(new Link(home.resolve(".local/bin").resolve(NAME), installedLauncher));
    }

    private String domain() {
        return "gui/" + env.uid();
    }

    @Override
    public boolean serviceManagerReachable() {
        return env.commands().run(List.of("launchctl", "print", domain())).exitCode() == 0;
    }

    /** {@code launchctl print}'s exit code for a job it does not know ("Could not find service"). */
    static final int NOT_FOUND = 113;

    /** Loaded and running: {@code launchctl print} of the job says {@code state = running}; not loaded: false. */
    @Override
    public Optional<Boolean> helperRunning() {
        CommandRunner.Result r = env.commands().run(List.of("launchctl", "print", domain() + "/" + LABEL));
        if (r.exitCode() == NOT_FOUND) {
            return Optional.of(false); // not loaded
        }
        if (r.exitCode() != 0) {
            return Optional.empty(); // absent, timed out, or an error that says nothing about the job
        }
        return Optional.of(r.out().lines().anyMatch(l -> l.strip().equals("state = running")));
    }

    @Override
    public List<Step> activate(Path installedLauncher) {
        return List.of(
                Step.tolerant("launchctl", "bootout", domain() + "/" + LABEL),
                Step.of("launchctl", "bootstrap", domain(), plist().toString()));
    }

    @Override
    public List<Step> deactivate() {
        return List.of(Step.tolerant("launchctl", "bootout", domain() + "/" + LABEL));
    }

    @Override
    public List<Step> afterRemoval() {
        return List.of();
    }
}
