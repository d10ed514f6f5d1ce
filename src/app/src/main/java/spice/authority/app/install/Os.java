package spice.authority.app.install;

import java.util.Locale;

/** The platform family an install targets; chosen once from {@code os.name}. */
public enum Os {
    LINUX,
    MACOS,
    WINDOWS;

    /** The family of {@code os.name}; anything else is refused by the caller. */
    static Os of(String osName) {
        String n = osName.toLowerCase(Locale.ROOT);
        if (n.startsWith("linux")) {
            return LINUX;
        }
        if (n.startsWith("mac") || n.startsWith("darwin")) {
            return MACOS;
        }
        if (n.startsWith("windows")) {
            return WINDOWS;
        }
        throw new IllegalArgumentException("unsupported platform for a per-user install: " + osName);
    }
}
