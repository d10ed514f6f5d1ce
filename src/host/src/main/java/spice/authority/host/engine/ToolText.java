package spice.authority.host.engine;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.SafeText;
import spice.authority.snapshot.plan.ToolDefinition;

/**
 * The text rules of the engine's tool layer (wire-format-v1alpha3.md section 5, as spice-agent
 * HEAD's tool package keeps them): a tool name or call ID is valid UTF-8 (a Java string without an
 * unpaired surrogate) with no NUL, CR, LF or TAB anywhere; a schema, arguments or a result is
 * valid UTF-8. Stricter than the payload rules, which still accept those characters inside a
 * name or ID: the engine refuses them before they reach a tool or a snapshot.
 */
final class ToolText {
    private ToolText() {
    }

    /** Why {@code text} is no tool name or call ID, or {@code null} when it is one (as to these rules). */
    static String problem(String text) {
        if (!GoText.isValidUnicode(text)) {
            return "is not valid UTF-8";
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\0' || c == '\r' || c == '\n' || c == '\t') {
                return "contains NUL, CR, LF or TAB";
            }
        }
        return null;
    }

    /** True when {@code bytes} are valid UTF-8 (no replacement: malformed input is refused). */
    static boolean isUtf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    /**
     * Refuses a tool definition whose name breaks the name rules or whose input schema is not
     * valid UTF-8.
     *
     * @throws IllegalArgumentException naming the rule
     */
    static ToolDefinition requireDefinition(ToolDefinition d) {
        String problem = problem(d.name());
        if (problem != null) {
            throw new IllegalArgumentException("tool name " + shown(d.name()) + " " + problem);
        }
        if (!isUtf8(d.inputSchema())) {
            throw new IllegalArgumentException("the input schema of tool " + d.name() + " is not valid UTF-8");
        }
        return d;
    }

    /** A name or ID for a message: quoted, escaped, bounded. */
    static String shown(String text) {
        return "\"" + SafeText.bounded(text, 128) + "\"";
    }
}
