package spice.authority.snapshot.json;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

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
     * Whether {@code s} is valid Unicode text: every UTF-16 surrogate in it is part of a high-low
     * pair. Only such a string has one exact UTF-8 encoding; Java's encoder (and Go's, for the
     * invalid UTF-8 such a string stands for) silently replaces an unpaired surrogate, so two
     * different strings could encode alike. This is the one definition every run-ID rule uses.
     */
    public static boolean isValidUnicode(String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The exact UTF-8 encoding of valid Unicode text, for anything that is hashed, signed or used
     * as a name.
     *
     * @throws IllegalArgumentException when {@code s} is not valid Unicode text (an unpaired
     *     surrogate): it is reported, never replaced; the message shows no part of {@code s}
     */
    public static byte[] utf8Exact(String s) {
        // SECURITY: a replacing encoder (String.getBytes) maps "a\ud800", "a\udc00" and "a?" to
        // the same bytes; this encoder reports instead, as the last line of defence behind the
        // run-ID rules.
        try {
            ByteBuffer out = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            return Arrays.copyOfRange(out.array(), out.arrayOffset() + out.position(), out.arrayOffset() + out.limit());
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("text is not valid Unicode (unpaired surrogate)");
        }
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
