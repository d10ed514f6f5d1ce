package spice.authority.snapshot.json;

/**
 * Caller-supplied text (run IDs, pids declared in bodies) as it may appear in a log line: every
 * code point that is not printable, or that can reorder or hide the text around it, is written as
 * an escape, so a caller can neither forge log lines nor disguise what it named.
 *
 * <p><b>Guarantees.</b> The result contains only printable code points of categories letters,
 * marks, numbers, punctuation, symbols and the ASCII space; everything else (C0 and C1 controls,
 * U+2028/U+2029, bidi embeddings, overrides and isolates, other format characters such as
 * U+200B..U+200F and U+FEFF, unpaired surrogates, unassigned and private-use code points, other
 * separators) becomes {@code \\uXXXX} or {@code \\U{XXXXXX}}. A backslash is doubled, so an escape
 * can always be told from text that merely looks like one. {@code null} becomes {@code <none>}.
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

    private static boolean printable(int cp) {
        if (cp == ' ') {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                 Character.MODIFIER_LETTER, Character.OTHER_LETTER, Character.NON_SPACING_MARK,
                 Character.ENCLOSING_MARK, Character.COMBINING_SPACING_MARK, Character.DECIMAL_DIGIT_NUMBER,
                 Character.LETTER_NUMBER, Character.OTHER_NUMBER, Character.DASH_PUNCTUATION,
                 Character.START_PUNCTUATION, Character.END_PUNCTUATION, Character.CONNECTOR_PUNCTUATION,
                 Character.OTHER_PUNCTUATION, Character.INITIAL_QUOTE_PUNCTUATION,
                 Character.FINAL_QUOTE_PUNCTUATION, Character.MATH_SYMBOL, Character.CURRENCY_SYMBOL,
                 Character.MODIFIER_SYMBOL, Character.OTHER_SYMBOL -> !bidiControl(cp);
            default -> false; // controls, format (bidi, ZW*), separators, surrogates, private use, unassigned
        };
    }

    /** Bidi controls are format characters already; listed for the marks that are not (none today). */
    private static boolean bidiControl(int cp) {
        return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F
                || cp == 0x061C;
    }
}
