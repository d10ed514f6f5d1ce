package spice.authority.app.install;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Linux: the app-image in {@code $XDG_DATA_HOME/spice-authority/VERSION} (default
 * {@code ~/.local/share}), a symbolic link {@code ~/.local/bin/spice-authority}, and a systemd
 * user unit {@code $XDG_CONFIG_HOME/systemd/user/spice-authority.service} (default
 * {@code ~/.config}).
 */
final class LinuxLayout implements PlatformLayout {
    static final String UNIT = NAME + ".service";
    /** {@code systemctl is-active} states: the unit's process may be running, or certainly is not. */
    private static final Set<String> UP = Set.of("active", "activating", "reloading", "deactivating", "refreshing");
    private static final Set<String> DOWN = Set.of("inactive", "failed");
    private static final Set<String> REACHABLE = Set.of("running", "degraded", "starting", "initializing", "maintenance");

    private final Environment env;
    private final Path home;

    LinuxLayout(Environment env) throws InstallRefusedException {
        this.env = env;
        this.home = env.home();
    }

    @Override
    public Path installRoot() {
        return env.absolute("XDG_DATA_HOME").orElse(home.resolve(".local/share")).resolve(NAME);
    }

    Path unitFile() {
        return env.absolute("XDG_CONFIG_HOME").orElse(home.resolve(".config")).resolve("systemd/user").resolve(UNIT);
    }

    @Override
    public Path launcherIn(Path image) {
        return image.resolve("bin").resolve(NAME);
    }

    @Override
    public Path cfgIn(Path image) {
        return image.resolve("lib/app").resolve(NAME + ".cfg");
    }

    @Override
    public List<GeneratedFile> registration(Path installedLauncher) {
        return List.of(new GeneratedFile(unitFile(), unit(installedLauncher).getBytes(StandardCharsets.UTF_8), "systemd user unit"));
    }

    /** The unit: the helper in the foreground, restarted on failure, started with the user's session. */
    static String unit(Path launcher) {
        return """
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
                """.formatted(execArg(launcher.toString()));
    }

    /** One ExecStart word: quoted when needed; '%' and '$' escaped so systemd expands nothing. */
    static String execArg(String s) {
        String e = s.replace("%", "%%").replace("$", "$$");
        if (e.matches("[A-Za-z0-9_./@+,:=%$-]+")) {
            return e;
        }
        return "\"" + e.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    @Override
    public List<Link> links(Path installedLauncher) {
        return List.of(new Link(home.resolve(".local/bin").resolve(NAME), installedLauncher));
    }

    @Override
    public boolean serviceManagerReachable() {
        CommandRunner.Result r = env.commands().run(List.of("systemctl", "--user", "is-system-running"));
        return r.exitCode() != 127 && REACHABLE.contains(r.out().strip());
    }

    @Override
    public Optional<Boolean> helperRunning() {
        CommandRunner.Result r = env.commands().run(List.of("systemctl", "--user", "is-active", UNIT));
        String state = r.out().strip();
        if (UP.contains(state)) {
            return Optional.of(true);
        }
        return DOWN.contains(state) ? Optional.of(false) : Optional.empty();
    }

    @Override
    public List<Step> activate(Path installedLauncher) {
        return List.of(
                Step.of("systemctl", "--user", "daemon-reload"),
                Step.of("systemctl", "--user", "enable", UNIT),
                // restart, not start: after an upgrade the running helper is the old version.
                Step.of("systemctl", "--user", "restart", UNIT));
    }

    @Override
    public List<Step> deactivate() {
        return List.of(Step.tolerant("systemctl", "--user", "disable", "--now", UNIT));
    }

    @Override
    public List<Step> afterRemoval() {
        return List.of(Step.of("systemctl", "--user", "daemon-reload"));
    }
}
