package spice.authority.os.windows;

import static spice.authority.os.DirectoryRefusedException.Category.NAME;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileNames;

/**
 * The configured authority path on Windows: a drive letter, {@code :\}, and backslash-separated
 * components (wire-format d.8 "Path"). Immutable and valid from construction.
 *
 * <p><b>Refused</b>, each naming the offending component: an empty path; a NUL or control
 * character; a path that is not absolute on a drive ({@code C:foo}, {@code \foo}, relative
 * paths); every form starting with two separators (UNC {@code \\server\share}, the Win32
 * namespaces {@code \\?\} and {@code \\.\}) and the NT form {@code \??\}; forward slashes; the
 * volume root itself; empty, {@code .} and {@code ..} components and a trailing separator; the
 * characters {@code < > : " / | ? *} (so no alternate data stream {@code name:stream} and no
 * wildcard); a trailing dot or space (Win32 strips them, so the name would not be the one
 * opened); reserved device names ({@code CON}, {@code PRN}, {@code AUX}, {@code NUL},
 * {@code COM1}-{@code COM9}, {@code LPT1}-{@code LPT9} and their superscript forms,
 * {@code CONIN$}, {@code CONOUT$}), also with an extension; an unpaired surrogate; a component
 * longer than 255 UTF-16 units; a path longer than {@link #MAX_LENGTH}.
 *
 * <p>The walk opens each component relative to its parent's handle with {@code NtCreateFile}, so
 * none of the Win32 path rewriting (device names, trailing dots, {@code /}) is ever applied; the
 * rules above make sure the name the user sees is the name that is opened.
 *
 * @param path the path exactly as configured
 * @param drive the upper-case drive letter
 * @param components the components below the volume root, in order
 */
record WindowsPath(String path, char drive, List<String> components) {

    /** The longest accepted path, in UTF-16 units. */
    static final int MAX_LENGTH = 4095;
    private static final int MAX_COMPONENT = 255;
    private static final Set<String> RESERVED = Set.of("CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
            "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
            "COM\u00b9", "COM\u00b2", "COM\u00b3",
            "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
            "LPT\u00b9", "LPT\u00b2", "LPT\u00b3");

    WindowsPath {
        components = List.copyOf(components);
    }

    /**
     * Checks {@code path} and splits it.
     *
     * @throws DirectoryRefusedException {@code NAME}, naming the offending component
     */
    static WindowsPath parse(String path) throws DirectoryRefusedException {
        if (path == null || path.isEmpty()) {
            throw new DirectoryRefusedException(NAME, "<empty>", "the path is empty");
        }
        String shown = FileNames.printable(path);
        for (int i = 0; i < path.length(); i++) {
            if (path.charAt(i) < 0x20) {
                throw new DirectoryRefusedException(NAME, shown, "contains a control character");
            }
        }
        if (path.length() > MAX_LENGTH) {
            throw new DirectoryRefusedException(NAME, shown, "longer than " + MAX_LENGTH + " characters");
        }
        if (path.startsWith("\\\\") || path.startsWith("//")) {
            throw new DirectoryRefusedException(NAME, shown,
                    "UNC and \\\\?\\ or \\\\.\\ prefixed paths are not accepted; use a drive path such as C:\\...");
        }
        if (path.startsWith("\\??\\")) {
            throw new DirectoryRefusedException(NAME, shown, "NT object paths are not accepted; use a drive path");
        }
        if (path.indexOf('/') >= 0) {
            throw new DirectoryRefusedException(NAME, shown, "separators must be backslashes");
        }
        if (path.length() < 3 || !isDriveLetter(path.charAt(0)) || path.charAt(1) != ':' || path.charAt(2) != '\\') {
            throw new DirectoryRefusedException(NAME, shown, "not an absolute drive path (C:\\...)");
        }
        char drive = Character.toUpperCase(path.charAt(0));
        String rest = path.substring(3);
        if (rest.isEmpty()) {
            throw new DirectoryRefusedException(NAME, shown, "the volume root cannot be the authority directory");
        }
        if (rest.endsWith("\\")) {
            throw new DirectoryRefusedException(NAME, shown, "trailing separator");
        }
        List<String> parts = new ArrayList<>();
        StringBuilder prefix = new StringBuilder(path.substring(0, 2));
        for (String c : rest.split("\\\\", -1)) {
            prefix.append('\\').append(c);
            checkComponent(c, FileNames.printable(prefix.toString()));
            parts.add(c);
        }
        return new WindowsPath(path, drive, parts);
    }

    private static void checkComponent(String c, String shown) throws DirectoryRefusedException {
        if (c.isEmpty()) {
            throw new DirectoryRefusedException(NAME, shown, "empty component (repeated separator)");
        }
        if (c.equals(".") || c.equals("..")) {
            throw new DirectoryRefusedException(NAME, shown, "'" + c + "' components are not allowed");
        }
        if (c.length() > MAX_COMPONENT) {
            throw new DirectoryRefusedException(NAME, shown, "component longer than " + MAX_COMPONENT + " characters");
        }
        for (int i = 0; i < c.length(); i++) {
            char ch = c.charAt(i);
            if (ch == ':') {
                throw new DirectoryRefusedException(NAME, shown,
                        "contains ':' (a drive or an alternate data stream, name:stream)");
            }
            if ("<>\"|?*".indexOf(ch) >= 0) {
                throw new DirectoryRefusedException(NAME, shown, "contains '" + ch + "', which Windows names cannot");
            }
            if (Character.isHighSurrogate(ch) && (i + 1 == c.length() || !Character.isLowSurrogate(c.charAt(i + 1)))
                    || Character.isLowSurrogate(ch) && (i == 0 || !Character.isHighSurrogate(c.charAt(i - 1)))) {
                throw new DirectoryRefusedException(NAME, shown, "contains an unpaired surrogate");
            }
        }
        char last = c.charAt(c.length() - 1);
        if (last == '.' || last == ' ') {
            throw new DirectoryRefusedException(NAME, shown,
                    "ends with a " + (last == '.' ? "dot" : "space") + ", which Win32 strips");
        }
        if (isReservedDeviceName(c)) {
            throw new DirectoryRefusedException(NAME, shown, "is a reserved device name");
        }
    }

    /** Whether {@code name}, or its part before the first dot without trailing spaces, is a DOS device name. */
    static boolean isReservedDeviceName(String name) {
        int dot = name.indexOf('.');
        String base = dot < 0 ? name : name.substring(0, dot);
        int end = base.length();
        while (end > 0 && base.charAt(end - 1) == ' ') {
            end--;
        }
        return RESERVED.contains(base.substring(0, end).toUpperCase(Locale.ROOT));
    }

    private static boolean isDriveLetter(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }

    /** The volume root in Win32 form, {@code C:\}, as {@code GetDriveTypeW} and {@code CreateFileW} take it. */
    String volumeRoot() {
        return drive + ":\\";
    }

    /** The path of the first {@code n} components, for messages ({@code n == 0}: the volume root). */
    String prefix(int n) {
        StringBuilder sb = new StringBuilder(volumeRoot());
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                sb.append('\\');
            }
            sb.append(components.get(i));
        }
        return FileNames.printable(sb.toString());
    }

    /**
     * Whether {@code finalPath}, as {@code GetFinalPathNameByHandleW(FILE_NAME_NORMALIZED |
     * VOLUME_NAME_DOS)} returns it, names the first {@code n} components: the {@code \\?\} prefix is
     * stripped and case is ignored (wire-format d.8).
     */
    boolean finalPathMatches(String finalPath, int n) {
        String f = finalPath.startsWith("\\\\?\\") ? finalPath.substring(4) : finalPath;
        String expected = n == 0 ? volumeRoot() : prefix(n);
        return f.length() == expected.length() && f.toUpperCase(Locale.ROOT).equals(expected.toUpperCase(Locale.ROOT));
    }

    /**
     * The default authority directory, {@code %LOCALAPPDATA%\spice-agent\authority}, or null when
     * {@code localAppData} is unset or not an acceptable drive path.
     */
    static String defaultDirectory(String localAppData) {
        if (localAppData == null || localAppData.isEmpty()) {
            return null;
        }
        String base = localAppData;
        while (base.length() > 3 && base.endsWith("\\")) {
            base = base.substring(0, base.length() - 1);
        }
        String candidate = base + (base.endsWith("\\") ? "" : "\\") + "spice-agent\\authority";
        try {
            return parse(candidate).path();
        } catch (DirectoryRefusedException e) {
            return null;
        }
    }
}
