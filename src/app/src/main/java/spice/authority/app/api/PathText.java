package spice.authority.app.api;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The text of a request path, decoded by the helper itself from the raw path: percent escapes
 * become bytes, and the bytes must be well-formed UTF-8 (a strict decoder that reports, never
 * replaces). The lenient decoding of the HTTP stack turns {@code %FF}, a cut sequence such as
 * {@code %C3}, or an encoded surrogate such as {@code %ED%A0%80} into U+FFFD, so that a path would
 * name another run ({@code alias-%ED%A0%80} the run {@code alias-\uFFFD}); here each is refused.
 *
 * <p><b>Guarantees.</b> {@link #decode} returns exactly the text whose UTF-8 encoding the
 * segment's bytes are, so a run ID from a path is the one a body naming the same bytes gives, or
 * throws {@code 400 invalid_request} naming {@link #RULE}. Every byte sequence that is not UTF-8 is
 * refused: invalid bytes ({@code %80}, {@code %FF}), a sequence cut short, an overlong form, an
 * encoded surrogate (CESU-8) or a code point above U+10FFFF. A raw byte beyond ASCII counts as
 * the byte it is (the HTTP decoder hands each one over as one character of ISO 8859-1).
 */
final class PathText {
    private PathText() {}

    /** The rule, as a refusal names it. */
    static final String RULE = "a request path must be percent-encoded UTF-8: every segment decodes to valid Unicode "
            + "text (no invalid or truncated byte sequence, no overlong form, no encoded surrogate)";

    /**
     * The segment's text, decoded strictly.
     *
     * @throws ApiException {@code 400 invalid_request} naming {@link #RULE}
     */
    static String decode(String raw) {
        String s = decodeOrNull(raw);
        if (s == null) {
            throw ApiException.invalidRequest(RULE);
        }
        return s;
    }

    /** Whether every segment of a raw path decodes ({@link #decode}); checked before any route runs. */
    static boolean isValidPath(String rawPath) {
        if (rawPath == null) {
            return true;
        }
        for (String segment : rawPath.split("/", -1)) {
            if (decodeOrNull(segment) == null) {
                return false;
            }
        }
        return true;
    }

    /** The decoded text, or null when {@code raw} breaks the rule. */
    static String decodeOrNull(String raw) {
        if (raw == null) {
            return null;
        }
        if (isPlainAscii(raw)) {
            return raw;
        }
        ByteBuffer bytes = ByteBuffer.allocate(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length()) {
                    return null;
                }
                int hi = Character.digit(raw.charAt(i + 1), 16);
                int lo = Character.digit(raw.charAt(i + 2), 16);
                if (hi < 0 || lo < 0 || raw.charAt(i + 1) > 0x7F || raw.charAt(i + 2) > 0x7F) {
                    return null;
                }
                bytes.put((byte) (hi << 4 | lo));
                i += 2;
            } else if (c <= 0xFF) {
                bytes.put((byte) c);
            } else {
                return null; // not a byte: the path was decoded before it got here, which we cannot undo
            }
        }
        bytes.flip();
        // SECURITY: REPORT, never REPLACE: a replaced byte would name another run.
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        CharBuffer text;
        try {
            text = utf8.decode(bytes);
        } catch (CharacterCodingException e) {
            return null;
        }
        String s = text.toString();
        // The decoder refuses encoded surrogates; checked again, as the run-ID rule does.
        return spice.authority.snapshot.json.GoText.isValidUnicode(s) ? s : null;
    }

    /** Fast path: printable ASCII without a percent escape decodes to itself. */
    private static boolean isPlainAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7E || c == '%') {
                return false;
            }
        }
        return true;
    }
}
