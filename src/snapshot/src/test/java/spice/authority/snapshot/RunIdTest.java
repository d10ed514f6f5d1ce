package spice.authority.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PayloadRule;
import spice.authority.snapshot.payload.Snapshot;

/**
 * {@link RunId} is exactly the payload rule P-RUNID: every candidate is a valid run ID if and only
 * if a payload carrying it passes (ARCHITECTURE.md "one run-ID rule everywhere").
 */
class RunIdTest {
    private static final String BASE = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"),
            StandardCharsets.UTF_8);

    /** Candidates around every edge of the rule, as Java strings (JSON-escaped where they enter a payload). */
    private static final List<String> CANDIDATES = List.of(
            "run-1", "r".repeat(96), "r".repeat(97), "r".repeat(128), "r".repeat(129),
            "\u20AC".repeat(32), "\u20AC".repeat(33), "\uD83D\uDE00".repeat(24), "\uD83D\uDE00".repeat(24) + "r",
            "", " run", "run ", "run\u00A0", "\u2028run", "run 1", "run\u00A01",
            "run\u00001", "run\u00011", "run\t1", "run\u007F1", "run\u00851", "run\u009F1",
            "run\uD800", "run\uDC00x", "\uFFFD", "a/b", "../x");

    @Test
    void isValid_agreesWithPRunIdOnEveryCandidate() {
        List<String> disagreements = new ArrayList<>();
        for (String id : CANDIDATES) {
            boolean payloadAccepts = payloadVerdict(id).equals("OK");
            if (RunId.isValid(id) != payloadAccepts) {
                disagreements.add(escape(id) + ": RunId " + RunId.isValid(id) + ", payload " + payloadVerdict(id));
            }
        }
        assertThat(disagreements).isEmpty();
        assertThat(RunId.isValid("r".repeat(96))).isTrue();
        assertThat(RunId.isValid("r".repeat(97))).isFalse();
        assertThat(PayloadRule.P_RUNID.reason()).isEqualTo(RunId.RULE);
    }

    @Test
    void constructor_refusesWithTheRuleAndNeverEchoesTheText() {
        for (String bad : List.of("r".repeat(97), "secret\u0001text", "x\uD800")) {
            assertThatThrownBy(() -> new RunId(bad)).isInstanceOf(IllegalArgumentException.class).hasMessage(RunId.RULE);
        }
        assertThatThrownBy(() -> new RunId(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(RunId.parse("r".repeat(97))).isEmpty();
        assertThat(RunId.parse("run-1")).contains(new RunId("run-1"));
        assertThat(new RunId("run-1")).hasToString("run-1");
        assertThat(RunId.RULE).contains("96 UTF-8 bytes").contains("control characters");
    }

    private static String payloadVerdict(String id) {
        String json = BASE.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + jsonEscape(id) + "\"");
        try {
            Snapshot.decode(json.getBytes(StandardCharsets.UTF_8));
            return "OK";
        } catch (PayloadRejectedException e) {
            return e.rule().id();
        }
    }

    /**
     * The string as a JSON string body: controls and U+2028/9 as escapes (as Go writes them), and
     * lone surrogates as escapes too, which the decoder repairs and P-RUNID refuses. Valid text
     * without them is written raw, so a valid ID stays canonical.
     */
    private static String jsonEscape(String s) {
        boolean loneSurrogates = !GoText.isValidUnicode(s);
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c == 0x2028 || c == 0x2029 || (loneSurrogates && Character.isSurrogate(c))) {
                b.append(String.format("\\u%04x", (int) c));
            } else if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            sb.append(c >= 0x20 && c < 0x7F ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return sb.toString();
    }
}
