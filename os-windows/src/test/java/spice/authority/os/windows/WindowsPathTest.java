package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.FileNames;

/** Path and name rules for Windows drive paths (wire-format d.8 "Path"). */
class WindowsPathTest {

    private static DirectoryRefusedException refused(String path) {
        DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, () -> WindowsPath.parse(path));
        assertThat(e).as("must refuse %s", path).isNotNull();
        assertThat(e.category()).isEqualTo(Category.NAME);
        return e;
    }

    @Test
    void drivePath_split() throws Exception {
        WindowsPath p = WindowsPath.parse("c:\\Users\\me\\AppData\\Local\\spice-agent\\authority");
        assertThat(p.drive()).isEqualTo('C');
        assertThat(p.components()).containsExactly("Users", "me", "AppData", "Local", "spice-agent", "authority");
        assertThat(p.volumeRoot()).isEqualTo("C:\\");
        assertThat(p.prefix(0)).isEqualTo("C:\\");
        assertThat(p.prefix(2)).isEqualTo("C:\\Users\\me");
        assertThat(p.path()).isEqualTo("c:\\Users\\me\\AppData\\Local\\spice-agent\\authority");
    }

    @Test
    void unicodeAndSpacesInside_accepted() throws Exception {
        assertThat(WindowsPath.parse("D:\\Dokumente und Einstellungen\\J\u00fcrgen \ud83d\ude00\\a.b").components())
                .containsExactly("Dokumente und Einstellungen", "J\u00fcrgen \ud83d\ude00", "a.b");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "\\\\server\\share\\dir|UNC and",
            "\\\\?\\C:\\dir|UNC and",
            "\\\\.\\C:\\dir|UNC and",
            "\\\\?\\UNC\\server\\share|UNC and",
            "//server/share|UNC and",
            "\\??\\C:\\dir|NT object paths",
            "C:/Users/me|separators must be backslashes",
            "C:\\Users/me|separators must be backslashes",
            "C:relative\\dir|not an absolute drive path",
            "\\rooted\\dir|not an absolute drive path",
            "relative\\dir|not an absolute drive path",
            "1:\\dir|not an absolute drive path",
            "C:|not an absolute drive path",
            "C:\\|the volume root cannot be",
            "C:\\dir\\|trailing separator",
    })
    void notAnAbsoluteDrivePath_refused(String path, String reason) {
        DirectoryRefusedException e = refused(path);
        assertThat(e.component()).isEqualTo(FileNames.printable(path));
        assertThat(e.detail()).startsWith(reason);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', ignoreLeadingAndTrailingWhitespace = false, value = {
            "C:\\a\\\\b|C:\\a\\|empty component",
            "C:\\a\\.\\b|C:\\a\\.|'.' components",
            "C:\\a\\..\\b|C:\\a\\..|'..' components",
            "C:\\a\\file:stream|C:\\a\\file:stream|contains ':'",
            "C:\\a\\dir::$DATA\\b|C:\\a\\dir::$DATA|contains ':'",
            "C:\\a\\wild*|C:\\a\\wild*|contains '*'",
            "C:\\a\\q?\\b|C:\\a\\q?|contains '?'",
            "C:\\a\\x<y|C:\\a\\x<y|contains '<'",
            "C:\\a\\x>y|C:\\a\\x>y|contains '>'",
            "C:\\a\\dot.\\b|C:\\a\\dot.|ends with a dot",
            "C:\\a\\space \\b|C:\\a\\space |ends with a space",
            "C:\\a\\CON|C:\\a\\CON|is a reserved device name",
            "C:\\a\\nul.txt\\b|C:\\a\\nul.txt|is a reserved device name",
            "C:\\a\\Com1|C:\\a\\Com1|is a reserved device name",
            "C:\\a\\LPT9.log|C:\\a\\LPT9.log|is a reserved device name",
            "C:\\a\\aux .x|C:\\a\\aux .x|is a reserved device name",
            "C:\\a\\conin$|C:\\a\\conin$|is a reserved device name",
            "C:\\a\\COM\u00b9|C:\\a\\COM\u00b9|is a reserved device name",
    })
    void badComponent_refusedNamingIt(String path, String component, String reason) {
        DirectoryRefusedException e = refused(path);
        assertThat(e.component()).isEqualTo(component);
        assertThat(e.detail()).startsWith(reason);
    }

    @Test
    void pipe_refused() {
        assertThat(refused("C:\\a\\x|y").detail()).startsWith("contains '|'");
        assertThat(refused("C:\\a\\x\"y").detail()).startsWith("contains '\"'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"CONSOLE", "COM10", "LPT0", "nulx", "auxiliary.txt", "PRN_", "COM", "x.CON"})
    void nearReservedNames_accepted(String name) throws Exception {
        assertThat(WindowsPath.parse("C:\\" + name).components()).containsExactly(name);
    }

    @Test
    void controlCharacterAndNul_refused() {
        assertThat(refused("C:\\a\u0000b").detail()).isEqualTo("contains a control character");
        assertThat(refused("C:\\a\nb").detail()).isEqualTo("contains a control character");
    }

    @Test
    void unpairedSurrogate_refused() {
        assertThat(refused("C:\\a\ud800b").detail()).isEqualTo("contains an unpaired surrogate");
        assertThat(refused("C:\\a\udc00").detail()).isEqualTo("contains an unpaired surrogate");
    }

    @Test
    void emptyAndNull_refused() {
        assertThat(refused("").component()).isEqualTo("<empty>");
        assertThat(refused(null).component()).isEqualTo("<empty>");
    }

    @Test
    void tooLong_refused() throws Exception {
        String name = "a".repeat(255);
        assertThat(WindowsPath.parse("C:\\" + name).components()).containsExactly(name);
        assertThat(refused("C:\\" + name + "a").detail()).startsWith("component longer than 255");
        StringBuilder sb = new StringBuilder("C:");
        while (sb.length() <= WindowsPath.MAX_LENGTH) {
            sb.append("\\abcdefgh");
        }
        assertThat(refused(sb.toString()).detail()).startsWith("longer than 4095");
    }

    @Test
    void finalPath_comparedWithoutPrefixAndCase() throws Exception {
        WindowsPath p = WindowsPath.parse("C:\\Users\\Me\\auth");
        assertThat(p.finalPathMatches("\\\\?\\C:\\USERS\\me\\AUTH", 3)).isTrue();
        assertThat(p.finalPathMatches("C:\\Users\\Me\\auth", 3)).isTrue();
        assertThat(p.finalPathMatches("\\\\?\\C:\\Users", 1)).isTrue();
        assertThat(p.finalPathMatches("\\\\?\\C:\\", 0)).isTrue();
        assertThat(p.finalPathMatches("\\\\?\\D:\\Users\\Me\\auth", 3)).isFalse();
        assertThat(p.finalPathMatches("\\\\?\\C:\\Users\\Me\\auth2", 3)).isFalse();
        assertThat(p.finalPathMatches("\\\\?\\C:\\Users\\Other\\auth", 3)).isFalse();
        assertThat(p.finalPathMatches("\\\\?\\UNC\\srv\\C:\\Users\\Me\\auth", 3)).isFalse();
    }

    @Test
    void defaultDirectory_underLocalAppData() {
        assertThat(WindowsPath.defaultDirectory("C:\\Users\\me\\AppData\\Local"))
                .isEqualTo("C:\\Users\\me\\AppData\\Local\\spice-agent\\authority");
        assertThat(WindowsPath.defaultDirectory("C:\\Users\\me\\AppData\\Local\\\\"))
                .isEqualTo("C:\\Users\\me\\AppData\\Local\\spice-agent\\authority");
        assertThat(WindowsPath.defaultDirectory("E:\\")).isEqualTo("E:\\spice-agent\\authority");
        assertThat(WindowsPath.defaultDirectory(null)).isNull();
        assertThat(WindowsPath.defaultDirectory("")).isNull();
        assertThat(WindowsPath.defaultDirectory("\\\\server\\profiles\\me")).isNull();
        assertThat(WindowsPath.defaultDirectory("relative")).isNull();
    }

    /**
     * File names inside the directory follow the shared {@link FileNames} rule, opened relative to
     * the directory handle with NtCreateFile (no Win32 rewriting): that rule already keeps out
     * separators, stream and wildcard syntax and leading dots.
     */
    @Test
    void sharedFileNameRule_excludesWindowsSyntax() {
        for (String bad : List.of("a:b", "a\\b", "a/b", "a*", "a?", "a<b", "a>b", "a|b", "a\"b", "", ".", "..",
                "identity.key:$DATA", "run-x.state::$DATA")) {
            assertThat(catchThrowableOfType(DirectoryRefusedException.class, () -> FileNames.requireValid("C:\\d", bad)))
                    .as(bad).isNotNull();
        }
    }
}
