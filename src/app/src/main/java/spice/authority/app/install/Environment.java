package spice.authority.app.install;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything the install commands read from the world: environment variables (HOME, XDG_*,
 * LOCALAPPDATA), the platform, the user id, the app-image the running launcher belongs to, and the
 * way external commands are run. Tests build one around a temporary HOME instead of touching the
 * test JVM's environment.
 *
 * @param vars environment variables
 * @param os the platform family
 * @param uid the numeric user id (launchd's {@code gui/UID} domain); -1 where there is none
 * @param runningImage root of the app-image whose launcher started this process, if any
 * @param commands how external commands run
 */
public record Environment(Map<String, String> vars, Os os, long uid, Optional<Path> runningImage, CommandRunner commands) {
    public Environment {
        vars = Map.copyOf(vars);
        Objects.requireNonNull(os, "os");
        Objects.requireNonNull(runningImage, "runningImage");
        Objects.requireNonNull(commands, "commands");
    }

    /** The current process: {@code System.getenv()}, {@code os.name}, the jpackage launcher's path. */
    public static Environment current() {
        Os os = Os.of(System.getProperty("os.name"));
        long uid = os == Os.WINDOWS ? -1 : new com.sun.security.auth.module.UnixSystem().getUid();
        return new Environment(System.getenv(), os, uid, imageOf(os, System.getProperty("jpackage.app-path")),
                CommandRunner.system());
    }

    /**
     * The app-image root from the launcher path jpackage passes as {@code jpackage.app-path}:
     * {@code ROOT/bin/NAME} (Linux), {@code ROOT.app/Contents/MacOS/NAME} (macOS),
     * {@code ROOT\NAME.exe} (Windows).
     */
    static Optional<Path> imageOf(Os os, String launcher) {
        if (launcher == null || launcher.isEmpty()) {
            return Optional.empty();
        }
        Path p = Path.of(launcher).toAbsolutePath().normalize();
        Path root = switch (os) {
            case LINUX -> p.getParent() == null ? null : p.getParent().getParent();
            case MACOS -> p.getParent() == null || p.getParent().getParent() == null ? null : p.getParent().getParent().getParent();
            case WINDOWS -> p.getParent();
        };
        return Optional.ofNullable(root);
    }

    /** A variable's value when set to an absolute path (XDG: relative values are ignored). */
    Optional<Path> absolute(String name) {
        String v = vars.get(name);
        if (v == null || v.isEmpty()) {
            return Optional.empty();
        }
        Path p = Path.of(v);
        return p.isAbsolute() ? Optional.of(p) : Optional.empty();
    }

    /** The home directory ({@code HOME}, or {@code USERPROFILE} on Windows); absent: refused. */
    Path home() throws InstallRefusedException {
        Optional<Path> h = absolute(os == Os.WINDOWS ? "USERPROFILE" : "HOME");
        return h.orElseThrow(() -> new InstallRefusedException(
                (os == Os.WINDOWS ? "USERPROFILE" : "HOME") + " is not set to an absolute path"));
    }
}
