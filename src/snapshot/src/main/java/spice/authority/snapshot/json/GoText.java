package spice.authority.snapshot.json;

/**
 * Text predicates with the exact semantics of the reference (Go) implementation.
 *
 * <p>Java's {@code Character.isWhitespace} and {@code String.strip} use a different white-space
 * set than Go's {@code unicode.IsSpace}; byte-order comparison of UTF-8 differs from
 * {@code String.compareTo} for supplementary characters. Everything here is hard-coded to the
 * sets of wire-format.md section 0.
 */
public final class GoText {
    private GoText() {}

    /** Go's {@code unicode.IsSpace}: the Unicode White_Space property. */
    public static boolean isGoSpace(int cp) {
        if (cp <= 0x20) {
            return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
        }
        if (cp < 0x85) {
            return false;
        }
        return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A)
                || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
    }

    /** Go control: general category Cc (U+0000–U+001F and U+007F–U+009F). */
    public static boolean isGoControl(int cp) {
        return cp <= 0x1F || (cp >= 0x7F && cp <= 0x9F);
    }

    /**
     * Number of bytes of the UTF-8 encoding Go would produce for this string. An unpaired
     * surrogate (which cannot come out of our decoder) counts as U+FFFD, three bytes.
     */
    public static int utf8Length(String s) {
        int n = s.length();
        int bytes = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                continue;
            }
            if (c < 0x800) {
                bytes += 1;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 2; // 4 bytes for 2 chars
                i++;
            } else {
                bytes += 2;
            }
        }
        return bytes;
    }

    /**
     * token(maxBytes) of wire-format.md section 0: non-empty, no leading or trailing Go white
     * space, and at most {@code maxBytes} UTF-8 bytes.
     */
    public static boolean isToken(String s, int maxBytes) {
        if (s.isEmpty()) {
            return false;
        }
        if (isGoSpace(s.codePointAt(0)) || isGoSpace(s.codePointBefore(s.length()))) {
            return false;
        }
        // Fast exit for short strings: every char takes at most 3 bytes per UTF-16 unit.
        return s.length() * 3L <= maxBytes || utf8Length(s) <= maxBytes;
    }

    /** True when a Go-control code point appears anywhere in {@code s}. */
    public static boolean containsGoControl(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (isGoControl(s.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    /** True when a Go white-space code point appears anywhere in {@code s}. */
    public static boolean containsGoSpace(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (isGoSpace(s.charAt(i))) { // all Go space code points are in the BMP
                return true;
            }
        }
        return false;
    }

    /**
     * Compares two strings by the unsigned bytes of their UTF-8 encodings, as Go's {@code <} on
     * strings does. For valid Unicode text this is code point order.
     */
    public static int compareUtf8(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(utf8Order(ca), utf8Order(cb));
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    // An unpaired surrogate is encoded by Go as U+FFFD; order it as such.
    private static int utf8Order(int cp) {
        return (cp >= 0xD800 && cp <= 0xDFFF) ? 0xFFFD : cp;
    }

    /** Lowercase hex of the bytes. */
    public static String hex(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xF];
            out[2 * i + 1] = HEX[bytes[i] & 0xF];
        }
        return new String(out);
    }

    /** True for exactly {@code digits} lowercase hex digits. */
    public static boolean isLowerHex(String s, int digits) {
        if (s.length() != digits) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    static final char[] HEX = "0123456789abcdef".toCharArray();
}
