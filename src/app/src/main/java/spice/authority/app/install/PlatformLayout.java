package spice.authority.app.install;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where a per-user install goes on one platform and how the helper is registered to run at login.
 * One implementation per platform, chosen once from {@link Environment#os()}.
 *
 * <p>Guarantees: every path returned lies below the user's home directory (or
 * {@code LOCALAPPDATA}); no method writes anything or runs a command except
 * {@link #serviceManagerReachable()}, which only asks.
 */
sealed interface PlatformLayout permits LinuxLayout, MacLayout, WindowsLayout {

    /** The launcher's and the service's name. */
    String NAME = "spice-authority";

    static PlatformLayout of(Environment env) throws InstallRefusedException {
        return switch (env.os()) {
            case LINUX -> new LinuxLayout(env);
            case MACOS -> new MacLayout(env);
            case WINDOWS -> new WindowsLayout(env);
        };
    }

    /** The per-user program location: holds one directory per version and the install manifest. */
    Path installRoot();

    /** Where the app-image's tree goes for {@code version}. */
    default Path imageDir(String version) {
        return installRoot().resolve(version);
    }

    /** The launcher inside an app-image rooted at {@code image}. */
    Path launcherIn(Path image);

    /** The launcher's configuration file ({@code NAME.cfg}) inside an app-image rooted at {@code image}. */
    Path cfgIn(Path image);

    /** Files that register the helper (unit, agent plist, task XML) for the installed launcher. */
    List<GeneratedFile> registration(Path installedLauncher);

    /** Convenience links (e.g. {@code ~/.local/bin/spice-authority}) to the installed launcher. */
    List<Link> links(Path installedLauncher);

    /** Whether the service manager can be driven now (else the commands are printed for the user). */
    boolean serviceManagerReachable();

    /** Commands that (re)load and start the registration after it changed. */
    List<Step> activate(Path installedLauncher);

    /** Commands that stop and unregister the helper before its files are removed. */
    List<Step> deactivate();

    /** Commands to run once the registration's files are gone. */
    List<Step> afterRemoval();

    /**
     * Asks the service manager whether the helper it runs is up now (only asks, like
     * {@link #serviceManagerReachable()}).
     *
     * @return true while it runs (or is starting or stopping), false when it is stopped, failed or
     *     not registered, empty when the answer cannot be told (an unexpected answer, or a platform
     *     where the question is not asked)
     */
    Optional<Boolean> helperRunning();

    /** Whether {@link #helperRunning()} asks at all (false: it is always empty on this platform). */
    default boolean asksWhetherRunning() {
        return true;
    }

    /** A file generated for the registration. */
    record GeneratedFile(Path path, byte[] content, String what) {}

    /** A symbolic link to create. */
    record Link(Path path, Path target) {}

    /** An external command; {@code mayFail} for ones whose failure is expected in some states. */
    record Step(List<String> argv, boolean mayFail) {
        public Step {
            argv = List.copyOf(argv);
        }

        static Step of(String... argv) {
            return new Step(List.of(argv), false);
        }

        static Step tolerant(String... argv) {
            return new Step(List.of(argv), true);
        }

        String display() {
            StringBuilder b = new StringBuilder();
            for (String a : argv) {
                if (!b.isEmpty()) {
                    b.append(' ');
                }
                b.append(a.matches("[A-Za-z0-9_./:@=%+,\\\\-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
            }
            return b.toString();
        }
    }
}
