package spice.authority.app.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Caller-supplied text in log lines: nothing that forges a line or reorders what is shown. */
class LogTextTest {

    @Test
    void plainAsciiRunIds_areUnchanged() {
        assertThat(LogText.of("run-1")).isEqualTo("run-1");
        assertThat(LogText.of("a b")).isEqualTo("a b");
        assertThat(LogText.of("a/b:c.d_e~f")).isEqualTo("a/b:c.d_e~f");
    }

    @Test
    void nonAsciiText_isEscaped_soThatNoLocaleCanMakeTwoRunIdsReadAlike() {
        assertThat(LogText.of("Lauf-ä-漢字-🙂")).isEqualTo("Lauf-\\u00E4-\\u6F22\\u5B57-\\U{01F642}");
        // Latin e-acute and Cyrillic a: both "job-?" in a log written without a UTF-8 locale.
        assertThat(LogText.of("job-\u00e9")).isEqualTo("job-\\u00E9");
        assertThat(LogText.of("job-\u0430")).isEqualTo("job-\\u0430");
        assertThat(LogText.of("alias-\ufffd")).isEqualTo("alias-\\uFFFD");
    }

    @Test
    void everyCodePoint_isWrittenInPrintableAscii_andNoTwoAlike() {
        java.util.Map<String, Integer> seen = new java.util.HashMap<>();
        java.util.List<String> clashes = new java.util.ArrayList<>();
        java.util.List<String> notAscii = new java.util.ArrayList<>();
        for (int cp = 0; cp < 0x110000; cp++) {
            String out = LogText.of("x" + Character.toString(cp));
            if (!out.chars().allMatch(c -> c >= 0x20 && c <= 0x7E)) {
                notAscii.add(Integer.toHexString(cp));
            }
            Integer before = seen.put(out, cp);
            if (before != null) {
                clashes.add(Integer.toHexString(before) + "/" + Integer.toHexString(cp));
            }
        }
        assertThat(notAscii).as("code points not written in printable ASCII").isEmpty();
        assertThat(clashes).as("code points written alike").isEmpty();
        // A supplementary code point is not two surrogates in disguise.
        assertThat(LogText.of("\ud83d\ude42")).isNotEqualTo(LogText.of("\ud83d") + LogText.of("\ude42"));
    }

    @Test
    void lineBreaksAndControls_areEscaped() {
        assertThat(LogText.of("a\nb\rc\td\u0000e\u007ff\u0085g")).isEqualTo("a\\u000Ab\\u000Dc\\u0009d\\u0000e\\u007Ff\\u0085g");
        assertThat(LogText.of("x\u2028y\u2029z")).isEqualTo("x\\u2028y\\u2029z");
    }

    @Test
    void bidiAndOtherFormatCharacters_areEscaped() {
        for (int cp : new int[] {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F,
                0x061C, 0x200B, 0x200D, 0xFEFF}) {
            String in = "run" + Character.toString(cp) + "1";
            assertThat(LogText.of(in)).as("U+%04X", cp).isEqualTo(String.format("run\\u%04X1", cp));
        }
    }

    @Test
    void loneSurrogates_privateUse_andUnassigned_areEscaped() {
        assertThat(LogText.of("a\ud800b")).isEqualTo("a\\uD800b");
        assertThat(LogText.of("a\udc00")).isEqualTo("a\\uDC00");
        assertThat(LogText.of("\ue000")).isEqualTo("\\uE000");
        assertThat(LogText.of(new String(Character.toChars(0x10FFFD)))).isEqualTo("\\U{10FFFD}");
    }

    @Test
    void backslash_isDoubled_soAnEscapeCannotBeForged() {
        assertThat(LogText.of("a\\u000Ab")).isEqualTo("a\\\\u000Ab");
        assertThat(LogText.of("a\\u000Ab")).isNotEqualTo(LogText.of("a\nb"));
    }

    @Test
    void nothingPrintableIsLeftRaw() {
        java.util.Set<Integer> forbidden = java.util.Set.of((int) Character.CONTROL, (int) Character.FORMAT,
                (int) Character.LINE_SEPARATOR, (int) Character.PARAGRAPH_SEPARATOR, (int) Character.SURROGATE,
                (int) Character.PRIVATE_USE, (int) Character.UNASSIGNED);
        java.util.List<String> raw = new java.util.ArrayList<>();
        for (int cp = 0; cp < 0x110000; cp++) {
            LogText.of(Character.toString(cp)).codePoints()
                    .filter(c -> forbidden.contains(Character.getType(c)))
                    .forEach(c -> raw.add(Integer.toHexString(c)));
        }
        assertThat(raw).as("code points left raw").isEmpty();
        assertThat(LogText.of(null)).isEqualTo("<none>");
    }
}
