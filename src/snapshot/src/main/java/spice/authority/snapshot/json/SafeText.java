package spice.authority.snapshot.json;

/**
 * Caller-supplied text (run IDs, pids declared in bodies) as it may appear in a log line: every
 * code point outside printable ASCII is written as an escape, so a caller can neither forge log
 * lines nor disguise what it named, and two different texts never read the same, whatever the
 * locale the log is written in (without a UTF-8 locale, {@code job-é} and the Cyrillic
 * {@code job-а} would both come out as {@code job-?}).
 *
 * <p><b>Guarantees.</b> The result is printable ASCII (U+0020..U+007E) only; everything else
 * (letters and symbols beyond ASCII, C0 and C1 controls, U+2028/U+2029, bidi and other format
 * characters, unpaired surrogates, unassigned and private-use code points) becomes
 * {@code \\uXXXX} (a code point of the BMP, or an unpaired surrogate) or {@code \\U{XXXXXX}} (a
 * supplementary code point, written once, never as two surrogates). A backslash is doubled, so an
 * escape can always be told from text that merely looks like one, and the escaping is one-to-one:
 * different texts give different results. {@code null} becomes {@code <none>}.
 */
public final class SafeText {
    private SafeText() {}

    public static String of(String s) {
        if (s == null) {
            return "<none>";
        }
        if (isPlain(s)) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == '\\') {
                b.append("\\\\");
            } else if (printable(cp)) {
                b.appendCodePoint(cp);
            } else if (cp <= 0xFFFF) {
                b.append(String.format("\\u%04X", cp));
            } else {
                b.append(String.format("\\U{%06X}", cp));
            }
        }
        return b.toString();
    }

    /**
     * {@link #of} of at most {@code max} characters of {@code s} (never a surrogate pair cut in two),
     * and, when cut, how long {@code s} was: for text that may be long (an envelope's run ID before
     * validation holds up to 16 MiB).
     */
    public static String bounded(String s, int max) {
        if (s == null || s.length() <= max) {
            return of(s);
        }
        int n = Character.isHighSurrogate(s.charAt(max - 1)) ? max - 1 : max;
        return of(s.substring(0, n)) + "...(" + s.length() + " chars)";
    }

    /** Fast path: printable ASCII without backslash. */
    private static boolean isPlain(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7E || c == '\\') {
                return false;
            }
        }
        return true;
    }

    /** SECURITY: printable ASCII only; anything else could be shown as something it is not. */
    private static boolean printable(int cp) {
        return cp >= 0x20 && cp <= 0x7E;
    }
}
