package spice.authority.snapshot.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.snapshot.payload.PayloadFixtures.OK;
import static spice.authority.snapshot.payload.PayloadFixtures.V01;
import static spice.authority.snapshot.payload.PayloadFixtures.V03;
import static spice.authority.snapshot.payload.PayloadFixtures.edit;
import static spice.authority.snapshot.payload.PayloadFixtures.editAll;
import static spice.authority.snapshot.payload.PayloadFixtures.quote;
import static spice.authority.snapshot.payload.PayloadFixtures.times;
import static spice.authority.snapshot.payload.PayloadFixtures.utf8;
import static spice.authority.snapshot.payload.PayloadFixtures.verdict;
import static spice.authority.snapshot.payload.PayloadFixtures.withBytes;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One or more negative cases per rule of wire-format.md b.5/b.6 (plus P-CANONICAL), each a minimal
 * edit of a canonical corpus file, with the boundary values that must still pass, and the check
 * order between neighbouring rules.
 */
class PayloadRulesTest {
    private static final int MIB = 1 << 20;

    // valid-03's history, message by message.
    static final String M0 = "{\"id\":\"input\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"Create two files.\"}]}";
    static final String M1 = "{\"id\":\"run-42/message/5\",\"role\":\"assistant\",\"parts\":["
            + "{\"kind\":\"tool_call\",\"name\":\"write_file\",\"call_id\":\"call-a\",\"data\":{\"path\":\"a.txt\",\"body\":\"A\"}},"
            + "{\"kind\":\"tool_call\",\"name\":\"write_file\",\"call_id\":\"call-b\",\"data\":{\"path\":\"b.txt\",\"body\":\"B\"}}]}";
    static final String M2 = "{\"id\":\"run-42/message/7\",\"role\":\"tool\",\"parts\":["
            + "{\"kind\":\"tool_result\",\"name\":\"write_file\",\"call_id\":\"call-a\",\"data\":{\"written\":1}}]}";
    static final String M3 = "{\"id\":\"run-42/message/9\",\"role\":\"tool\",\"parts\":["
            + "{\"kind\":\"tool_result\",\"name\":\"write_file\",\"call_id\":\"call-b\",\"data\":{\"written\":1}}]}";
    static final String M4 = "{\"id\":\"run-42/message/15\",\"role\":\"assistant\",\"parts\":["
            + "{\"kind\":\"tool_call\",\"name\":\"read\",\"call_id\":\"call-c\",\"data\":{\"path\":\"a.txt\"}}]}";
    static final String M5 = "{\"id\":\"run-42/message/17\",\"role\":\"tool\",\"parts\":["
            + "{\"kind\":\"tool_result\",\"name\":\"read\",\"call_id\":\"call-c\",\"data\":\"A\"}]}";
    static final String V01_HISTORY = "[{\"id\":\"input-1\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}]";
    static final String V01_PARTS = "[{\"kind\":\"text\",\"text\":\"hello\"}]";
    static final String V01_COMPILED = "[\"broker:injected\",\"provider:injected\",\"stage:kernel\"]";
    static final String FPR = "sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296";

    /** valid-03 with its history replaced by {@code messages}. */
    static String v03(String... messages) {
        return edit(V03, "[" + String.join(",", M0, M1, M2, M3, M4, M5) + "]", "[" + String.join(",", messages) + "]");
    }

    static String v01Parts(String... parts) {
        return edit(V01, V01_PARTS, "[" + String.join(",", parts) + "]");
    }

    static String v01Message(String message) {
        return edit(V01, V01_HISTORY, "[" + V01_HISTORY.substring(1, V01_HISTORY.length() - 1) + "," + message + "]");
    }

    static String v01Compiled(String... entries) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (String e : entries) {
            j.add(quote(e));
        }
        return edit(V01, V01_COMPILED, j.toString());
    }

    static String v01Ids(String... ids) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (String e : ids) {
            j.add(quote(e));
        }
        return edit(V01, "\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":" + j);
    }

    static String v01(String from, String to) {
        return edit(V01, from, to);
    }

    static String v01Str(String member, String oldValue, String newValue) {
        return edit(V01, "\"" + member + "\":" + quote(oldValue), "\"" + member + "\":" + quote(newValue));
    }

    private static Arguments c(String name, Object payload, String expected) {
        return Arguments.of(name, payload, expected);
    }

    static final String EXT = "{\"kind\":\"extension\",\"namespace\":\"x.y\",\"data\":{\"a\":1}}";
    static final String M4_PART = "{\"kind\":\"tool_call\",\"name\":\"read\",\"call_id\":\"call-c\",\"data\":{\"path\":\"a.txt\"}}";
    static final String M5_PART = "{\"kind\":\"tool_result\",\"name\":\"read\",\"call_id\":\"call-c\",\"data\":\"A\"}";

    static Stream<Arguments> cases() {
        String a128 = "a".repeat(128);
        String a256 = "a".repeat(256);
        List<Arguments> l = new ArrayList<>();
        // sanity: the message split above really is valid-03
        l.add(c("base valid-01", V01, OK));
        l.add(c("base valid-03 rebuilt from its messages", v03(M0, M1, M2, M3, M4, M5), OK));

        // decoding rules (details in PayloadGoSemanticsTest)
        l.add(c("P-SIZE empty", "", "P-SIZE"));
        l.add(c("P-JSON truncated", V01.substring(0, 40), "P-JSON"));
        l.add(c("P-TRAILING second value", V01 + "{}", "P-TRAILING"));
        l.add(c("P-UNKNOWN top-level member", v01("\"status\":", "\"extra\":0,\"status\":"), "P-UNKNOWN"));
        l.add(c("P-TYPE string for number", v01("\"last_sequence\":7", "\"last_sequence\":\"7\""), "P-TYPE"));

        // 1. P-VERSION
        l.add(c("P-VERSION v1alpha1", v01Str("version", Snapshot.FORMAT, "spice.agent.snapshot/v1alpha1"), "P-VERSION"));
        l.add(c("P-VERSION missing", v01("\"version\":\"spice.agent.snapshot/v1alpha2\",", ""), "P-VERSION"));
        l.add(c("P-VERSION trailing space", v01Str("version", Snapshot.FORMAT, Snapshot.FORMAT + " "), "P-VERSION"));
        l.add(c("P-VERSION other case", v01Str("version", Snapshot.FORMAT, "Spice.agent.snapshot/v1alpha2"), "P-VERSION"));
        l.add(c("P-VERSION before everything else", v01Str("version", Snapshot.FORMAT, "x").replace("\"run_id\":\"run-1\"", "\"run_id\":\"\""), "P-VERSION"));

        // 2. message checks
        l.add(c("P-MSG-ID empty", v01Str("id", "input-1", ""), "P-MSG-ID"));
        l.add(c("P-MSG-ID leading space", v01Str("id", "input-1", " input-1"), "P-MSG-ID"));
        l.add(c("P-MSG-ID trailing U+0085", v01Str("id", "input-1", "input-1\u0085"), "P-MSG-ID"));
        l.add(c("P-MSG-ID leading U+2007", v01Str("id", "input-1", "\u2007input-1"), "P-MSG-ID"));
        l.add(c("P-MSG-ID trailing U+202F", v01Str("id", "input-1", "input-1\u202F"), "P-MSG-ID"));
        l.add(c("P-MSG-ID leading U+00A0", v01Str("id", "input-1", "\u00A0input-1"), "P-MSG-ID"));
        l.add(c("P-MSG-ID trailing U+3000", v01Str("id", "input-1", "input-1\u3000"), "P-MSG-ID"));
        l.add(c("msg id leading U+001C is not Go space", v01Str("id", "input-1", "\u001Cinput-1"), OK));
        l.add(c("msg id trailing U+001F is not Go space", v01Str("id", "input-1", "input-1\u001F"), OK));
        l.add(c("msg id trailing U+200B is not Go space", v01Str("id", "input-1", "input-1\u200B"), OK));
        l.add(c("msg id trailing U+180E is not Go space", v01Str("id", "input-1", "input-1\u180E"), OK));
        l.add(c("msg id leading U+FEFF is not Go space", v01Str("id", "input-1", "\uFEFFinput-1"), OK));
        l.add(c("P-MSG-ID leading U+000B", v01Str("id", "input-1", "\u000Binput-1"), "P-MSG-ID"));
        l.add(c("P-MSG-ID trailing U+1680", v01Str("id", "input-1", "input-1\u1680"), "P-MSG-ID"));
        l.add(c("P-MSG-ID trailing U+200A", v01Str("id", "input-1", "input-1\u200A"), "P-MSG-ID"));
        l.add(c("msg id inner space and control", v01Str("id", "input-1", "in put\u0001x"), OK));
        l.add(c("msg id 128 bytes", v01Str("id", "input-1", a128), OK));
        l.add(c("P-MSG-ID 129 bytes", v01Str("id", "input-1", a128 + "b"), "P-MSG-ID"));
        l.add(c("msg id 128 bytes of 4-byte chars", v01Str("id", "input-1", "\uD83D\uDE00".repeat(32)), OK));
        l.add(c("P-MSG-ID 129 bytes multibyte", v01Str("id", "input-1", "\uD83D\uDE00".repeat(32) + "b"), "P-MSG-ID"));

        l.add(c("P-PART-KIND case", v01("\"kind\":\"text\"", "\"kind\":\"Text\""), "P-PART-KIND"));
        l.add(c("P-PART-KIND missing", v01("\"kind\":\"text\",", ""), "P-PART-KIND"));
        l.add(c("P-PART-KIND dash", v03(M0, M1.replace("\"kind\":\"tool_call\",\"name\":\"write_file\",\"call_id\":\"call-b\"",
                "\"kind\":\"tool-call\",\"name\":\"write_file\",\"call_id\":\"call-b\""), M2, M3, M4, M5), "P-PART-KIND"));
        l.add(c("P-PART-KIND before role", v01("\"kind\":\"text\"", "\"kind\":\"x\"").replace("\"role\":\"user\"", "\"role\":\"x\""), "P-PART-KIND"));

        l.add(c("P-PART-INACTIVE text with name", v01("\"text\":\"hello\"", "\"text\":\"hello\",\"name\":\"n\""), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE text with call_id", v01("\"text\":\"hello\"", "\"text\":\"hello\",\"call_id\":\"c\""), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE text with namespace", v01("\"text\":\"hello\"", "\"text\":\"hello\",\"namespace\":\"n\""), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE text with data", v01("\"text\":\"hello\"", "\"text\":\"hello\",\"data\":1"), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE text with data null", v01("\"text\":\"hello\"", "\"text\":\"hello\",\"data\":null"), "P-PART-INACTIVE"));
        l.add(c("text with empty name is absent", v01("\"text\":\"hello\"", "\"text\":\"hello\",\"name\":\"\""), "P-CANONICAL"));
        l.add(c("P-PART-INACTIVE before P-TEXT", v01("\"text\":\"hello\"", "\"name\":\"n\""), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE tool_call with text", v03(M0, M1, M2, M3, M4.replace("\"kind\":\"tool_call\",", "\"kind\":\"tool_call\",\"text\":\"t\","), M5), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE tool_result with namespace", v03(M0, M1, M2, M3, M4, M5.replace("\"data\":\"A\"", "\"namespace\":\"n\",\"data\":\"A\"")), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE extension with text", v01Parts(V01_PARTS.substring(1, V01_PARTS.length() - 1), EXT.replace("\"namespace\"", "\"text\":\"t\",\"namespace\"")), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE extension with name", v01Parts(V01_PARTS.substring(1, V01_PARTS.length() - 1), EXT.replace("\"namespace\"", "\"name\":\"t\",\"namespace\"")), "P-PART-INACTIVE"));
        l.add(c("P-PART-INACTIVE extension with call_id", v01Parts(V01_PARTS.substring(1, V01_PARTS.length() - 1), EXT.replace("\"namespace\"", "\"call_id\":\"t\",\"namespace\"")), "P-PART-INACTIVE"));

        l.add(c("P-TEXT empty", v01Str("text", "hello", ""), "P-TEXT"));
        l.add(c("P-TEXT missing", v01(",\"text\":\"hello\"", ""), "P-TEXT"));
        l.add(c("text only white space", v01Str("text", "hello", " \n\t\u00A0"), OK));

        String extPart = V01_PARTS.substring(1, V01_PARTS.length() - 1);
        l.add(c("P-CALL-ID leading space", v03(M0, M1, M2, M3, M4.replace("\"call-c\"", "\" call-c\""), M5), "P-CALL-ID"));
        l.add(c("P-CALL-ID empty present", v03(M0, M1, M2, M3, M4.replace("\"call-c\"", "\"\""), M5), "P-CALL-ID"));
        l.add(c("P-CALL-ID missing", v03(M0, M1, M2, M3, M4.replace(",\"call_id\":\"call-c\"", ""), M5), "P-CALL-ID"));
        l.add(c("P-CALL-ID on result", v03(M0, M1, M2, M3, M4, M5.replace("\"call-c\"", "\"call-c\u2029\"")), "P-CALL-ID"));
        l.add(c("P-CALL-ID 129 bytes", v03(M0, M1, M2, M3, M4.replace("\"call-c\"", quote(a128 + "b")), M5), "P-CALL-ID"));
        l.add(c("call id 128 bytes", v03(M0, M1, M2, M3, M4.replace("\"call-c\"", quote(a128)), M5.replace("\"call-c\"", quote(a128))), OK));
        l.add(c("P-CALL-ID before P-TOOL-NAME", v03(M0, M1, M2, M3, M4.replace("\"call-c\"", "\"\"").replace("\"read\"", "\"\""), M5), "P-CALL-ID"));

        l.add(c("P-TOOL-NAME trailing space", v03(M0, M1, M2, M3, M4.replace("\"read\"", "\"read \""), M5), "P-TOOL-NAME"));
        l.add(c("P-TOOL-NAME missing", v03(M0, M1, M2, M3, M4.replace("\"name\":\"read\",", ""), M5), "P-TOOL-NAME"));
        l.add(c("P-TOOL-NAME 129 bytes", v03(M0, M1, M2, M3, M4.replace("\"read\"", quote(a128 + "b")), M5), "P-TOOL-NAME"));
        l.add(c("tool name 128 bytes with inner space", v03(M0, M1, M2, M3, M4.replace("\"read\"", quote("r d" + "a".repeat(125))),
                M5.replace("\"read\"", quote("r d" + "a".repeat(125)))), OK));

        l.add(c("extension part valid", v01Parts(extPart, EXT), OK));
        l.add(c("P-NAMESPACE leading space", v01Parts(extPart, EXT.replace("\"x.y\"", "\" x.y\"")), "P-NAMESPACE"));
        l.add(c("P-NAMESPACE missing", v01Parts(extPart, EXT.replace("\"namespace\":\"x.y\",", "")), "P-NAMESPACE"));
        l.add(c("namespace 256 bytes", v01Parts(extPart, EXT.replace("\"x.y\"", quote(a256))), OK));
        l.add(c("P-NAMESPACE 257 bytes", v01Parts(extPart, EXT.replace("\"x.y\"", quote(a256 + "b"))), "P-NAMESPACE"));

        l.add(c("P-DATA tool_call missing", v03(M0, M1, M2, M3, M4.replace(",\"data\":{\"path\":\"a.txt\"}", ""), M5), "P-DATA"));
        l.add(c("P-DATA tool_result missing", v03(M0, M1, M2, M3, M4, M5.replace(",\"data\":\"A\"", "")), "P-DATA"));
        l.add(c("P-DATA extension missing", v01Parts(extPart, EXT.replace(",\"data\":{\"a\":1}", "")), "P-DATA"));
        l.add(c("extension data null is present", v01Parts(extPart, EXT.replace("{\"a\":1}", "null")), OK));

        l.add(c("P-MSG-ROLE case", v01("\"role\":\"user\"", "\"role\":\"User\""), "P-MSG-ROLE"));
        l.add(c("P-MSG-ROLE empty", v01("\"role\":\"user\"", "\"role\":\"\""), "P-MSG-ROLE"));
        l.add(c("P-MSG-ROLE developer", v01Message("{\"id\":\"m2\",\"role\":\"developer\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}"), "P-MSG-ROLE"));
        l.add(c("P-MSG-ROLE before P-MSG-PARTS", v01("\"role\":\"user\",\"parts\":" + V01_PARTS, "\"role\":\"x\",\"parts\":[]"), "P-MSG-ROLE"));

        l.add(c("P-MSG-PARTS empty", v01("\"parts\":" + V01_PARTS, "\"parts\":[]"), "P-MSG-PARTS"));
        l.add(c("P-MSG-PARTS missing", v01(",\"parts\":" + V01_PARTS, ""), "P-MSG-PARTS"));
        l.add(c("P-MSG-ID before P-MSG-PARTS", v01("\"id\":\"input-1\",\"role\":\"user\",\"parts\":" + V01_PARTS, "\"id\":\"\",\"role\":\"user\",\"parts\":[]"), "P-MSG-ID"));
        l.add(c("message checks run on every message before definition", v01Message("{\"id\":\" \",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}")
                .replace("\"name\":\"test\"", "\"name\":\"\""), "P-MSG-ID"));

        // 3. definition
        l.add(c("P-DEF-NAME empty", v01Str("name", "test", ""), "P-DEF-NAME"));
        l.add(c("P-DEF-NAME leading space", v01Str("name", "test", " test"), "P-DEF-NAME"));
        l.add(c("P-DEF-NAME trailing U+00A0", v01Str("name", "test", "test\u00A0"), "P-DEF-NAME"));
        l.add(c("P-DEF-NAME trailing U+0085", v01Str("name", "test", "test\u0085"), "P-DEF-NAME"));
        l.add(c("def name U+001C edge is not Go space", v01Str("name", "test", "\u001Ctest\u001D"), OK));
        l.add(c("def name inner space and no length limit", v01Str("name", "test", "te st" + "x".repeat(10_000)), OK));
        l.add(c("P-DEF-MODEL empty", v01Str("model", "model", ""), "P-DEF-MODEL"));
        l.add(c("P-DEF-MODEL trailing U+3000", v01Str("model", "model", "model\u3000"), "P-DEF-MODEL"));
        l.add(c("P-DEF-MODEL leading U+1680", v01Str("model", "model", "\u1680model"), "P-DEF-MODEL"));
        l.add(c("P-DEF-NAME before P-DEF-MODEL", v01Str("name", "test", "").replace("\"model\":\"model\"", "\"model\":\"\""), "P-DEF-NAME"));
        l.add(c("P-DEF-TURNS zero", v01("\"max_turns\":3", "\"max_turns\":0"), "P-DEF-TURNS"));
        l.add(c("P-DEF-TURNS missing", v01(",\"max_turns\":3", ""), "P-DEF-TURNS"));
        l.add(c("P-DEF-TURNS 1001", v01("\"max_turns\":3", "\"max_turns\":1001"), "P-DEF-TURNS"));
        l.add(c("max_turns 1000", v01("\"max_turns\":3", "\"max_turns\":1000"), OK));
        l.add(c("P-DEF-MODEL before P-DEF-TURNS", v01Str("model", "model", " ").replace("\"max_turns\":3", "\"max_turns\":0"), "P-DEF-MODEL"));
        l.add(c("P-DEF-TURNS before plan", v01("\"max_turns\":3", "\"max_turns\":0").replace("\"generation-1\"", "\"\""), "P-DEF-TURNS"));

        // 4. plan
        l.add(c("P-TOOLPLAN empty", v01Str("tool_plan_id", "generation-1", ""), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner space", v01Str("tool_plan_id", "generation-1", "generation 1"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner U+00A0", v01Str("tool_plan_id", "generation-1", "generation\u00A01"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner U+2007", v01Str("tool_plan_id", "generation-1", "generation\u20071"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner U+0001", v01Str("tool_plan_id", "generation-1", "generation\u00011"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner U+001C", v01Str("tool_plan_id", "generation-1", "generation\u001C1"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner DEL", v01Str("tool_plan_id", "generation-1", "generation\u007F1"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN inner U+0085", v01Str("tool_plan_id", "generation-1", "generation\u00851"), "P-TOOLPLAN"));
        l.add(c("tool plan id inner U+200B", v01Str("tool_plan_id", "generation-1", "generation\u200B1"), OK));
        l.add(c("tool plan id 256 bytes", v01Str("tool_plan_id", "generation-1", a256), OK));
        l.add(c("P-TOOLPLAN 257 bytes", v01Str("tool_plan_id", "generation-1", a256 + "b"), "P-TOOLPLAN"));
        l.add(c("P-TOOLPLAN before P-PLAN-COUNT", v01Str("tool_plan_id", "generation-1", "").replace(V01_COMPILED, "[]"), "P-TOOLPLAN"));

        l.add(c("P-PLAN-COUNT empty", v01(V01_COMPILED, "[]"), "P-PLAN-COUNT"));
        l.add(c("P-PLAN-COUNT missing", v01("\"compiled_identities\":" + V01_COMPILED + ",", ""), "P-PLAN-COUNT"));
        l.add(c("P-PLAN-SORTED swapped", v01Compiled("provider:injected", "broker:injected", "stage:kernel"), "P-PLAN-SORTED"));
        l.add(c("P-PLAN-SORTED before entry token", v01Compiled("provider:injected", "broker:injected", "stage:kernel "), "P-PLAN-SORTED"));
        l.add(c("P-PLAN-DUP equal neighbours are sorted", v01Compiled("broker:injected", "broker:injected", "provider:injected", "stage:kernel"), "P-PLAN-DUP"));
        l.add(c("compiled byte order U+FF5E < U+1F600", v01Compiled("broker:injected", "stage:\uFF5E", "stage:\uD83D\uDE00"), OK));
        l.add(c("P-PLAN-SORTED U+1F600 before U+FF5E", v01Compiled("broker:injected", "stage:\uD83D\uDE00", "stage:\uFF5E"), "P-PLAN-SORTED"));
        l.add(c("P-PLAN-TOKEN leading space", v01Compiled(" broker:injected", "provider:injected", "stage:kernel"), "P-PLAN-TOKEN"));
        l.add(c("P-PLAN-TOKEN 257 bytes", v01Compiled("broker:injected", "provider:injected", "stage:" + "k".repeat(251)), "P-PLAN-TOKEN"));
        l.add(c("compiled entry 256 bytes", v01Compiled("broker:injected", "provider:injected", "stage:" + "k".repeat(250)), OK));
        l.add(c("P-PLAN-FORM no colon", v01Compiled("broker", "provider:injected", "stage:kernel"), "P-PLAN-FORM"));
        l.add(c("P-PLAN-FORM empty name", v01Compiled("broker:", "provider:injected", "stage:kernel"), "P-PLAN-FORM"));
        l.add(c("P-PLAN-CATEGORY empty category", v01Compiled(":x", "broker:injected", "provider:injected", "stage:kernel"), "P-PLAN-CATEGORY"));
        l.add(c("compiled name may contain colons", v01Compiled("broker:a:b", "provider:injected", "stage:kernel"), OK));
        l.add(c("P-PLAN-CATEGORY unknown", v01Compiled("agent:x", "broker:injected", "provider:injected", "stage:kernel"), "P-PLAN-CATEGORY"));
        l.add(c("P-PLAN-CATEGORY case", v01Compiled("Broker:x", "broker:injected", "provider:injected", "stage:kernel"), "P-PLAN-CATEGORY"));
        l.add(c("all six categories", v01Compiled("broker:a", "decorator:a", "observer:a", "provider:a", "stage:a", "tool:a"), OK));
        l.add(c("P-PLAN-CATEGORY of entry 0 before P-PLAN-TOKEN of entry 3", v01Compiled("agent:x", "broker:injected", "provider:injected", "stage:kernel "), "P-PLAN-CATEGORY"));
        l.add(c("P-PLAN-TOKEN of entry 0 before P-PLAN-DUP of entry 2", v01Compiled("broker: ", "provider:injected", "provider:injected"), "P-PLAN-TOKEN"));

        l.add(c("P-COMPAT leading space", v01Str("snapshot_compatibility_identity", "tests:v1", " tests:v1"), "P-COMPAT"));
        l.add(c("P-COMPAT trailing U+0085", v01Str("snapshot_compatibility_identity", "tests:v1", "tests:v1\u0085"), "P-COMPAT"));
        l.add(c("P-COMPAT 257 bytes", v01Str("snapshot_compatibility_identity", "tests:v1", a256 + "b"), "P-COMPAT"));
        l.add(c("compat empty", v01Str("snapshot_compatibility_identity", "tests:v1", ""), OK));
        l.add(c("compat 256 bytes with inner space", v01Str("snapshot_compatibility_identity", "tests:v1", "a b" + "c".repeat(253)), OK));
        l.add(c("compat missing reads as empty", v01("\"snapshot_compatibility_identity\":\"tests:v1\",", ""), "P-CANONICAL"));
        l.add(c("P-COMPAT before P-FPR", v01Str("snapshot_compatibility_identity", "tests:v1", " ").replace(FPR, "x"), "P-COMPAT"));

        l.add(c("P-FPR uppercase hex", v01Str("fingerprint", FPR, FPR.toUpperCase().replace("SHA256:", "sha256:")), "P-FPR"));
        l.add(c("P-FPR uppercase prefix", v01Str("fingerprint", FPR, FPR.replace("sha256:", "SHA256:")), "P-FPR"));
        l.add(c("P-FPR 63 digits", v01Str("fingerprint", FPR, FPR.substring(0, FPR.length() - 1)), "P-FPR"));
        l.add(c("P-FPR 65 digits", v01Str("fingerprint", FPR, FPR + "0"), "P-FPR"));
        l.add(c("P-FPR non-hex", v01Str("fingerprint", FPR, FPR.substring(0, FPR.length() - 1) + "g"), "P-FPR"));
        l.add(c("P-FPR empty", v01Str("fingerprint", FPR, ""), "P-FPR"));
        l.add(c("fingerprint only form-checked", v01Str("fingerprint", FPR, "sha256:" + "0".repeat(64)), OK));
        l.add(c("P-FPR before P-RUNID", v01Str("fingerprint", FPR, "").replace("\"run_id\":\"run-1\"", "\"run_id\":\"\""), "P-FPR"));

        // 5. run id: token(96) and no Go control (stricter)
        l.add(c("P-RUNID empty", v01Str("run_id", "run-1", ""), "P-RUNID"));
        l.add(c("P-RUNID missing", v01("\"run_id\":\"run-1\",", ""), "P-RUNID"));
        l.add(c("P-RUNID leading space", v01Str("run_id", "run-1", " run-1"), "P-RUNID"));
        l.add(c("P-RUNID trailing U+2028", v01Str("run_id", "run-1", "run-1\u2028"), "P-RUNID"));
        l.add(c("run id 96 bytes", v01Str("run_id", "run-1", "r".repeat(96)), OK));
        l.add(c("P-RUNID 97 bytes", v01Str("run_id", "run-1", "r".repeat(97)), "P-RUNID"));
        l.add(c("run id 96 bytes of 3-byte chars", v01Str("run_id", "run-1", "\u20AC".repeat(32)), OK));
        l.add(c("P-RUNID 99 bytes of 3-byte chars", v01Str("run_id", "run-1", "\u20AC".repeat(33)), "P-RUNID"));
        l.add(c("P-RUNID inner U+0001 (stricter)", v01Str("run_id", "run-1", "run\u00011"), "P-RUNID"));
        l.add(c("P-RUNID inner U+0085 (stricter)", v01Str("run_id", "run-1", "run\u00851"), "P-RUNID"));
        l.add(c("P-RUNID inner DEL (stricter)", v01Str("run_id", "run-1", "run\u007F1"), "P-RUNID"));
        l.add(c("P-RUNID inner U+009F (stricter)", v01Str("run_id", "run-1", "run\u009F1"), "P-RUNID"));
        l.add(c("P-RUNID inner U+001C (stricter)", v01Str("run_id", "run-1", "run\u001C1"), "P-RUNID"));
        l.add(c("P-RUNID inner tab (stricter)", v01Str("run_id", "run-1", "run\t1"), "P-RUNID"));
        l.add(c("run id inner space and U+00A0", v01Str("run_id", "run-1", "run 1\u00A0x"), OK));
        l.add(c("P-RUNID before P-TURNS", v01Str("run_id", "run-1", "").replace("\"completed_turns\":1", "\"completed_turns\":4"), "P-RUNID"));

        // 6.-9.
        l.add(c("P-TURNS completed > max", v01("\"completed_turns\":1", "\"completed_turns\":4"), "P-TURNS"));
        l.add(c("P-TURNS completed status", v01("\"completed_turns\":1", "\"completed_turns\":4").replace("\"suspended\"", "\"completed\""), "P-TURNS"));
        l.add(c("P-TURNS before P-HIST-COUNT", v01("\"completed_turns\":1", "\"completed_turns\":4").replace(V01_HISTORY, "[]"), "P-TURNS"));
        l.add(c("P-HIST-COUNT empty", v01(V01_HISTORY, "[]"), "P-HIST-COUNT"));
        l.add(c("P-HIST-COUNT missing", v01(",\"history\":" + V01_HISTORY, ""), "P-HIST-COUNT"));
        l.add(c("P-HIST-COUNT before P-SEQ", v01(V01_HISTORY, "[]").replace("\"last_sequence\":7", "\"last_sequence\":0"), "P-HIST-COUNT"));
        l.add(c("P-SEQ zero", v01("\"last_sequence\":7", "\"last_sequence\":0"), "P-SEQ"));
        l.add(c("P-SEQ missing", v01(",\"last_sequence\":7", ""), "P-SEQ"));
        l.add(c("P-SEQ 2^64-1", v01("\"last_sequence\":7", "\"last_sequence\":18446744073709551615"), "P-SEQ"));
        l.add(c("last_sequence 2^64-2", v01("\"last_sequence\":7", "\"last_sequence\":18446744073709551614"), OK));
        l.add(c("last_sequence 1", v01("\"last_sequence\":7", "\"last_sequence\":1"), OK));
        l.add(c("P-SEQ before P-STATUS", v01("\"last_sequence\":7", "\"last_sequence\":0").replace("\"suspended\"", "\"running\""), "P-SEQ"));
        for (String s : new String[] {"running", "suspending", "finishing", "resume-pending", "Suspended", "COMPLETED", "", "suspended "}) {
            l.add(c("P-STATUS " + s, v01("\"status\":\"suspended\"", "\"status\":" + quote(s)), "P-STATUS"));
        }
        l.add(c("P-STATUS missing", v01(",\"status\":\"suspended\"", ""), "P-STATUS"));
        l.add(c("P-STATUS before P-IA", v01("\"status\":\"suspended\"", "\"status\":\"x\"").replace("\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":[\"\"]"), "P-STATUS"));
        l.add(c("P-SUSPENDED-TURNS completed == max", v01("\"completed_turns\":1", "\"completed_turns\":3"), "P-SUSPENDED-TURNS"));
        l.add(c("P-SUSPENDED-TURNS zero", v01("\"completed_turns\":1", "\"completed_turns\":0"), "P-SUSPENDED-TURNS"));
        l.add(c("P-SUSPENDED-TURNS max 1", v01("\"max_turns\":3", "\"max_turns\":1"), "P-SUSPENDED-TURNS"));
        l.add(c("suspended completed == max-1", v01("\"completed_turns\":1", "\"completed_turns\":2"), OK));
        for (String s : new String[] {"completed", "failed", "cancelled"}) {
            l.add(c(s + " with 0 turns", v01("\"completed_turns\":1", "\"completed_turns\":0").replace("\"suspended\"", quote(s)), OK));
            l.add(c(s + " with max turns", v01("\"completed_turns\":1", "\"completed_turns\":3").replace("\"suspended\"", quote(s)), OK));
        }
        l.add(c("P-SUSPENDED-TURNS before P-IA", v01("\"completed_turns\":1", "\"completed_turns\":3").replace("\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":[\"\"]"), "P-SUSPENDED-TURNS"));

        // 10. interactions
        l.add(c("P-IA-TOKEN empty", v01Ids(""), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN leading space", v01Ids(" a"), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN trailing U+0085", v01Ids("a\u0085"), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN leading U+2007", v01Ids("\u2007a"), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN trailing U+202F", v01Ids("a\u202F"), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN leading U+00A0", v01Ids("\u00A0a"), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN trailing U+205F", v01Ids("a\u205F"), "P-IA-TOKEN"));
        l.add(c("ia trailing U+001C is not Go space", v01Ids("a\u001C"), OK));
        l.add(c("ia leading U+001F is not Go space", v01Ids("\u001Fa"), OK));
        l.add(c("ia 128 bytes", v01Ids(a128), OK));
        l.add(c("P-IA-TOKEN 129 bytes", v01Ids(a128 + "b"), "P-IA-TOKEN"));
        l.add(c("P-IA-TOKEN second entry", v01Ids("a", "b "), "P-IA-TOKEN"));
        l.add(c("P-IA-ORDER descending", v01Ids("b", "a"), "P-IA-ORDER"));
        l.add(c("P-IA-ORDER equal", v01Ids("a", "a"), "P-IA-ORDER"));
        l.add(c("P-IA-ORDER prefix after longer", v01Ids("ab", "a"), "P-IA-ORDER"));
        l.add(c("ia prefix before longer", v01Ids("a", "ab"), OK));
        l.add(c("ia byte order U+FF5E < U+1F600", v01Ids("\uFF5E", "\uD83D\uDE00"), OK));
        l.add(c("P-IA-ORDER U+1F600 before U+FF5E", v01Ids("\uD83D\uDE00", "\uFF5E"), "P-IA-ORDER"));
        l.add(c("ia byte order U+E000 < U+10000", v01Ids("\uE000", "\uD800\uDC00"), OK));

        // 11. history walk
        l.add(c("P-HIST-FIRST-USER system", v01("\"role\":\"user\"", "\"role\":\"system\""), "P-HIST-FIRST-USER"));
        l.add(c("P-HIST-FIRST-USER tool", v01("\"role\":\"user\"", "\"role\":\"tool\""), "P-HIST-FIRST-USER"));
        l.add(c("P-HIST-FIRST-USER before P-MSG-ID-DUP", v01Message("{\"id\":\"input-1\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}")
                .replaceFirst("\"role\":\"user\"", "\"role\":\"assistant\""), "P-HIST-FIRST-USER"));
        l.add(c("P-MSG-ID-DUP", v03(M0, M1, M2.replace("run-42/message/7", "run-42/message/5"), M3, M4, M5), "P-MSG-ID-DUP"));
        l.add(c("P-MSG-ID-DUP of first", v01Message("{\"id\":\"input-1\",\"role\":\"assistant\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}"), "P-MSG-ID-DUP"));
        l.add(c("P-MSG-ID-DUP before later call rule", v03(M0, M1, M2.replace("run-42/message/7", "input"), M3, M4, M5.replace("\"call-c\"", "\"call-z\"")), "P-MSG-ID-DUP"));
        l.add(c("P-CALL-ROLE in user message", v03(M0, M1.replace("\"role\":\"assistant\"", "\"role\":\"user\""), M2, M3, M4, M5), "P-CALL-ROLE"));
        l.add(c("P-CALL-ROLE in tool message", v03(M0, M1, M2, M3, M4.replace("\"role\":\"assistant\"", "\"role\":\"tool\""), M5), "P-CALL-ROLE"));
        l.add(c("P-CALL-ROLE in system message", v03(M0, M1.replace("\"role\":\"assistant\"", "\"role\":\"system\""), M2, M3, M4, M5), "P-CALL-ROLE"));
        l.add(c("P-CALL-DUP reused after its result", v03(M0, M1, M2, M3, M4.replace("call-c", "call-a"), M5.replace("call-c", "call-a")), "P-CALL-DUP"));
        l.add(c("P-CALL-DUP in one message", v03(M0, M1.replace("call-b", "call-a"), M2, M3.replace("call-b", "call-a"), M4, M5), "P-CALL-DUP"));
        l.add(c("P-CALL-DUP different name", v03(M0, M1, M2, M3, M4.replace("call-c", "call-b"), M5.replace("call-c", "call-b")), "P-CALL-DUP"));
        l.add(c("P-RESULT-ROLE in assistant message", v03(M0, M1, M2.replace("\"role\":\"tool\"", "\"role\":\"assistant\""), M3, M4, M5), "P-RESULT-ROLE"));
        l.add(c("P-RESULT-ROLE in user message", v03(M0, M1, M2, M3, M4, M5.replace("\"role\":\"tool\"", "\"role\":\"user\"")), "P-RESULT-ROLE"));
        l.add(c("P-RESULT-MATCH other name", v03(M0, M1, M2, M3, M4, M5.replace("\"name\":\"read\"", "\"name\":\"write_file\"")), "P-RESULT-MATCH"));
        l.add(c("P-RESULT-MATCH name differs only in case", v03(M0, M1, M2, M3, M4, M5.replace("\"name\":\"read\"", "\"name\":\"Read\"")), "P-RESULT-MATCH"));
        l.add(c("P-RESULT-MATCH second result for resolved call", v03(M0, M1, M2, M3, M4, M5, M5.replace("run-42/message/17", "run-42/message/19")), "P-RESULT-MATCH"));
        l.add(c("P-RESULT-MATCH second result in same message", v03(M0, M1, M2, M3, M4, M5.replace("]}", "," + M5_PART + "]}")), "P-RESULT-MATCH"));
        l.add(c("P-RESULT-MATCH unknown call", v03(M0, M1, M2, M3, M4, M5.replace("call-c", "call-z")), "P-RESULT-MATCH"));
        l.add(c("P-RESULT-MATCH before its call", v03(M0, M2, M1, M3, M4, M5), "P-RESULT-MATCH"));
        l.add(c("P-RESULT-MATCH call_id case", v03(M0, M1, M2, M3, M4, M5.replace("call-c", "Call-c")), "P-RESULT-MATCH"));
        l.add(c("P-UNRESOLVED last call open (completed)", v03(M0, M1, M2, M3, M4), "P-UNRESOLVED"));
        l.add(c("P-UNRESOLVED failed", v03(M0, M1, M2, M3, M4).replace("\"completed\"", "\"failed\""), "P-UNRESOLVED"));
        l.add(c("P-UNRESOLVED cancelled", v03(M0, M1, M2, M3, M4).replace("\"completed\"", "\"cancelled\""), "P-UNRESOLVED"));
        l.add(c("P-UNRESOLVED suspended", v03(M0, M1, M2).replace("\"completed\"", "\"suspended\"").replace("\"completed_turns\":2", "\"completed_turns\":1"), "P-UNRESOLVED"));
        l.add(c("P-CALL-ROLE before P-UNRESOLVED", v03(M0, M1, M2, M3, M4.replace("\"role\":\"assistant\"", "\"role\":\"system\"")), "P-CALL-ROLE"));

        // b.6 positives
        l.add(c("results in reverse order", v03(M0, M1, M3, M2, M4, M5), OK));
        l.add(c("results interleaved with a later call", v03(M0, M1, M4, M3, M5, M2), OK));
        String bothResults = "{\"id\":\"run-42/message/7\",\"role\":\"tool\",\"parts\":["
                + "{\"kind\":\"tool_result\",\"name\":\"write_file\",\"call_id\":\"call-b\",\"data\":{\"written\":1}},"
                + "{\"kind\":\"tool_result\",\"name\":\"write_file\",\"call_id\":\"call-a\",\"data\":{\"written\":1}}]}";
        l.add(c("several results in one tool message", v03(M0, M1, bothResults, M4, M5), OK));
        l.add(c("text and extension parts in a tool message", v03(M0, M1,
                M2.replace("]}", ",{\"kind\":\"text\",\"text\":\"note\"}," + EXT + "]}"), M3, M4, M5), OK));
        l.add(c("tool message with only text", v03(M0, M1, M2, M3, "{\"id\":\"t\",\"role\":\"tool\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}", M4, M5), OK));
        l.add(c("messages of every role between call and result", v03(M0, M1,
                "{\"id\":\"u\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}",
                "{\"id\":\"s\",\"role\":\"system\",\"parts\":[" + EXT + "]}",
                "{\"id\":\"a\",\"role\":\"assistant\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}", M2, M3, M4, M5), OK));
        l.add(c("call with text and extension in the same assistant message", v03(M0, M1, M2, M3,
                M4.replace("[{", "[{\"kind\":\"text\",\"text\":\"x\"}," + EXT + ",{"), M5), OK));

        // v1alpha3 (details in PayloadV1alpha3Test)
        String ws = "\"sha256:fa9a454f4b2cb603e158e82e8070bbd6e0fa67f7e5b42e4d8a9a50087663f3fe\"";
        l.add(c("v1alpha3 base valid-01", PayloadFixtures.V3_01, OK));
        l.add(c("P-WORKSPACE empty with a compatibility identity", edit(PayloadFixtures.V3_01, ws, "\"\""), "P-WORKSPACE"));
        l.add(c("P-WORKSPACE uppercase digest", edit(PayloadFixtures.V3_01, ws, ws.toUpperCase().replace("SHA256", "sha256")), "P-WORKSPACE"));
        l.add(c("P-VERSION v1alpha2 with a workspace member", edit(V01, "\"tests:v1\"", "\"tests:v1\",\"workspace_fingerprint\":" + ws), "P-VERSION"));

        // P-CANONICAL
        l.add(c("P-CANONICAL part member order", v01("{\"kind\":\"text\",\"text\":\"hello\"}", "{\"text\":\"hello\",\"kind\":\"text\"}"), "P-CANONICAL"));
        l.add(c("P-CANONICAL top member order", v01("\"last_sequence\":7,\"status\":\"suspended\"", "\"status\":\"suspended\",\"last_sequence\":7"), "P-CANONICAL"));
        l.add(c("P-CANONICAL leading space", " " + V01, "P-CANONICAL"));
        return l.stream();
    }

    @ParameterizedTest(name = "{0}: {2}")
    @MethodSource("cases")
    void rule_minimalEdit_reportsFirstBrokenRule(String name, Object payload, String expected) {
        byte[] bytes = payload instanceof byte[] b ? b : utf8((String) payload);
        assertThat(verdict(bytes)).as(name).isEqualTo(expected);
    }

    @Test
    void ruleTable_coversEveryPayloadRule() {
        Set<String> covered = new TreeSet<>();
        cases().forEach(a -> covered.add((String) a.get()[2]));
        covered.add("P-MSG-SIZE");
        covered.add("P-HIST-SIZE");
        covered.add("P-MSG-PARTS");
        covered.add("P-IA-COUNT");
        Set<String> all = new TreeSet<>();
        for (PayloadRule r : EnumSet.allOf(PayloadRule.class)) {
            all.add(r.id());
        }
        assertThat(covered).containsAll(all);
    }

    // ---- boundaries that need large inputs ----------------------------------------------------

    private static String textPart(String text) {
        return "{\"kind\":\"text\",\"text\":" + quote(text) + "}";
    }

    @Test
    void text_exactly1MiB_passes_oneMoreByte_failsText() {
        assertThat(verdict(v01Str("text", "hello", "a".repeat(MIB)))).isEqualTo(OK);
        assertThat(verdict(v01Str("text", "hello", "a".repeat(MIB + 1)))).isEqualTo("P-TEXT");
    }

    @Test
    void text_limitCountsUtf8BytesNotChars() {
        assertThat(verdict(v01Str("text", "hello", "\u00E9".repeat(MIB / 2)))).isEqualTo(OK);
        assertThat(verdict(v01Str("text", "hello", "\u00E9".repeat(MIB / 2) + "a"))).isEqualTo("P-TEXT");
    }

    @Test
    void data_exactly1MiBRaw_passes_oneMoreByte_failsData() {
        String ok = "\"" + "a".repeat(MIB - 2) + "\"";
        String big = "\"" + "a".repeat(MIB - 1) + "\"";
        assertThat(verdict(v03(M0, M1, M2, M3, M4.replace("{\"path\":\"a.txt\"}", ok), M5))).isEqualTo(OK);
        assertThat(verdict(v03(M0, M1, M2, M3, M4.replace("{\"path\":\"a.txt\"}", big), M5))).isEqualTo("P-DATA");
    }

    @Test
    void data_limitCountsRawBytesWithWhiteSpace() {
        // Compacted this is [1], but the raw value is over 1 MiB: P-DATA, not P-CANONICAL.
        String spaced = "[" + " ".repeat(MIB) + "1]";
        String spacedOk = "[" + " ".repeat(MIB - 3) + "1]";
        assertThat(verdict(v03(M0, M1, M2, M3, M4.replace("{\"path\":\"a.txt\"}", spaced), M5))).isEqualTo("P-DATA");
        assertThat(verdict(v03(M0, M1, M2, M3, M4.replace("{\"path\":\"a.txt\"}", spacedOk), M5))).isEqualTo("P-CANONICAL");
    }

    @Test
    void parts_128pass_129failMsgParts() {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < 129; i++) {
            parts.add(textPart("p" + i));
        }
        assertThat(verdict(v01Parts(parts.subList(0, 128).toArray(String[]::new)))).isEqualTo(OK);
        assertThat(verdict(v01Parts(parts.toArray(String[]::new)))).isEqualTo("P-MSG-PARTS");
    }

    @Test
    void messageSize_exactly4MiB_passes_oneMoreByte_failsMsgSize() {
        // id "input-1" (7) + role "user" (4) + 4 x kind "text" (16) + texts = 4,194,304.
        int rest = 4 * MIB - 27 - 3 * MIB;
        String a = "a".repeat(MIB);
        assertThat(verdict(v01Parts(textPart(a), textPart(a), textPart(a), textPart("b".repeat(rest))))).isEqualTo(OK);
        assertThat(verdict(v01Parts(textPart(a), textPart(a), textPart(a), textPart("b".repeat(rest + 1))))).isEqualTo("P-MSG-SIZE");
    }

    @Test
    void messageSize_countsDataAndNames() {
        // two tool calls of 1 MiB data each plus ... exceeding 4 MiB through data alone
        String d = "\"" + "a".repeat(MIB - 2) + "\"";
        StringJoiner calls = new StringJoiner(",");
        StringJoiner results = new StringJoiner(",");
        for (int i = 0; i < 4; i++) {
            calls.add("{\"kind\":\"tool_call\",\"name\":\"read\",\"call_id\":\"c" + i + "\",\"data\":" + d + "}");
            results.add("{\"kind\":\"tool_result\",\"name\":\"read\",\"call_id\":\"c" + i + "\",\"data\":1}");
        }
        String assistant = "{\"id\":\"a\",\"role\":\"assistant\",\"parts\":[" + calls + "]}";
        String tool = "{\"id\":\"t\",\"role\":\"tool\",\"parts\":[" + results + "]}";
        assertThat(verdict(v03(M0, assistant, tool))).isEqualTo("P-MSG-SIZE");
        String threeCalls = assistant.replace(",{\"kind\":\"tool_call\",\"name\":\"read\",\"call_id\":\"c3\",\"data\":" + d + "}", "");
        String threeResults = tool.replace(",{\"kind\":\"tool_result\",\"name\":\"read\",\"call_id\":\"c3\",\"data\":1}", "");
        assertThat(verdict(v03(M0, threeCalls, threeResults))).isEqualTo(OK);
    }

    private static String v01History(int messages) {
        StringJoiner h = new StringJoiner(",", "[", "]");
        h.add(V01_HISTORY.substring(1, V01_HISTORY.length() - 1));
        for (int i = 1; i < messages; i++) {
            h.add("{\"id\":\"m-" + i + "\",\"role\":\"assistant\",\"parts\":[{\"kind\":\"text\",\"text\":\"x\"}]}");
        }
        return edit(V01, V01_HISTORY, h.toString());
    }

    @Test
    void history_4096pass_4097failHistCount() {
        assertThat(verdict(v01History(4096))).isEqualTo(OK);
        assertThat(verdict(v01History(4097))).isEqualTo("P-HIST-COUNT");
    }

    @Test
    void interactionIds_4096pass_4097failIaCount() {
        String[] ids = new String[4097];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = String.format("ia-%05d", i);
        }
        assertThat(verdict(v01Ids(java.util.Arrays.copyOf(ids, 4096)))).isEqualTo(OK);
        assertThat(verdict(v01Ids(ids))).isEqualTo("P-IA-COUNT");
        // P-IA-COUNT comes before per-entry checks
        ids[0] = " bad";
        assertThat(verdict(v01Ids(ids))).isEqualTo("P-IA-COUNT");
    }

    @Test
    void compiledIdentities_512pass_513failPlanCount() {
        String[] ids = new String[513];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = String.format("tool:t%04d", i);
        }
        assertThat(verdict(v01Compiled(java.util.Arrays.copyOf(ids, 512)))).isEqualTo(OK);
        assertThat(verdict(v01Compiled(ids))).isEqualTo("P-PLAN-COUNT");
    }

    @Test
    void historySize_invalidUtf8ExpandsPastLimit_histSizeBeforeCanonical() {
        // 20 text parts of 349,000 0xFF bytes: 6.98 MB of payload decode to 20.9 MB of U+FFFD.
        // Each part stays under 1 MiB and each message under 4 MiB; the running total breaks 16 MiB.
        StringJoiner h = new StringJoiner(",", "[", "]");
        String[] roles = {"user", "assistant", "user", "assistant", "user"};
        for (int m = 0; m < 5; m++) {
            h.add("{\"id\":\"m" + m + "\",\"role\":\"" + roles[m] + "\",\"parts\":[" + String.join(",",
                    java.util.Collections.nCopies(4, "{\"kind\":\"text\",\"text\":\"@@\"}")) + "]}");
        }
        String json = edit(V01, V01_HISTORY, h.toString());
        byte[] payload = withBytes(json, "@@", times(new byte[] {(byte) 0xFF}, 349_000));
        assertThat(payload.length).isLessThan(Snapshot.MAX_PAYLOAD_BYTES);
        assertThat(verdict(payload)).isEqualTo("P-HIST-SIZE");
        // four such messages stay under 16 MiB decoded: only the stricter canonical rule rejects them
        String four = edit(V01, V01_HISTORY, "[" + h.toString().substring(1).split(",\\{\"id\":\"m4\"")[0] + "]");
        assertThat(verdict(withBytes(four, "@@", times(new byte[] {(byte) 0xFF}, 349_000)))).isEqualTo("P-CANONICAL");
    }

    @Test
    void partText_invalidUtf8ExpandsPast1MiB_textBeforeCanonical() {
        byte[] ff = times(new byte[] {(byte) 0xFF}, 349_526); // 1,048,578 decoded bytes
        assertThat(verdict(withBytes(V01, "hello", ff))).isEqualTo("P-TEXT");
        assertThat(verdict(withBytes(V01, "hello", times(new byte[] {(byte) 0xFF}, 349_525)))).isEqualTo("P-CANONICAL");
    }
}
