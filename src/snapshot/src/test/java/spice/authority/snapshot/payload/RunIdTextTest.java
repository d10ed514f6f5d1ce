package spice.authority.snapshot.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.payload.PayloadFixtures.OK;
import static spice.authority.snapshot.payload.PayloadFixtures.V01;
import static spice.authority.snapshot.payload.PayloadFixtures.edit;
import static spice.authority.snapshot.payload.PayloadFixtures.hex;
import static spice.authority.snapshot.payload.PayloadFixtures.utf8;
import static spice.authority.snapshot.payload.PayloadFixtures.verdict;
import static spice.authority.snapshot.payload.PayloadFixtures.withBytes;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.LengthPrefixed;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.json.GoText;

/**
 * A run ID is valid Unicode text (ARCHITECTURE.md "stricter" point 3): a lone UTF-16 surrogate has
 * no exact UTF-8 encoding, so {@code "coll\ud800"}, {@code "coll\udc00"} and {@code "coll?"} would
 * hash and sign alike. Refused by P-RUNID whether it comes from a Java builder, an escaped lone
 * surrogate or invalid raw UTF-8 in the payload; a genuine U+FFFD and surrogate pairs stay valid.
 */
class RunIdTextTest {
    private static final String RUN_ID_MEMBER = "\"run_id\":\"run-1\"";

    /** Java strings that are not valid Unicode text: lone high/low, reversed pair, at start/middle/end. */
    static final List<String> INVALID = List.of(
            "coll\uD800", "coll\uDC00", "\uD800coll", "\uDC00coll", "co\uD800ll", "co\uDBFFll",
            "co\uDC00\uD800ll", "coll\uDFFF", "\uD83D", "\uDE00", "a\uD83D\uDE00\uD83D");

    /** Valid run IDs that use the edges: surrogate pairs (emoji) and a genuine U+FFFD. */
    static final List<String> VALID = List.of(
            "coll\uD83D\uDE00", "\uD83D\uDE00", "\uD800\uDC00x", "x\uDBFF\uDFFF", "coll\uFFFD", "\uFFFD");

    @Test
    void isValidUnicode_unpairedSurrogates_false_pairsAndReplacementCharacter_true() {
        List<String> wrong = new ArrayList<>();
        for (String s : INVALID) {
            if (GoText.isValidUnicode(s)) {
                wrong.add("accepted " + escape(s));
            }
        }
        for (String s : VALID) {
            if (!GoText.isValidUnicode(s)) {
                wrong.add("refused " + escape(s));
            }
        }
        assertThat(wrong).isEmpty();
        assertThat(GoText.isValidUnicode("")).isTrue();
    }

    @Test
    void utf8Exact_unpairedSurrogate_throwsWithoutEchoingText_validTextEncodesLikeTheJdk() {
        for (String s : INVALID) {
            assertThatThrownBy(() -> GoText.utf8Exact(s)).as(escape(s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("text is not valid Unicode (unpaired surrogate)");
        }
        for (String s : VALID) {
            assertThat(GoText.utf8Exact(s)).isEqualTo(s.getBytes(StandardCharsets.UTF_8));
        }
        assertThat(GoText.utf8Exact("")).isEmpty();
    }

    @Test
    void hashingHelpers_unpairedSurrogateRunId_refusedNeverReplaced() {
        byte[] digest = new byte[32];
        byte[] scope = new byte[32];
        scope[0] = 1;
        for (String s : INVALID) {
            assertThatThrownBy(() -> new LengthPrefixed(16).add(s)).as(escape(s)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> RunSubkey.derivationInput(scope, s, 1)).as(escape(s))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, s, 1, 1, digest)).as(escape(s))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        // The collision the rule prevents: a replacing encoder gives these the same bytes.
        assertThat("coll\uD800".getBytes(StandardCharsets.UTF_8)).isEqualTo("coll?".getBytes(StandardCharsets.UTF_8));
        assertThat(RunSubkey.derivationInput(scope, "coll?", 1)).isNotEqualTo(RunSubkey.derivationInput(scope, "coll\uFFFD", 1));
    }

    @Test
    void builder_unpairedSurrogateRunId_refusedAsRunId() {
        List<String> wrong = new ArrayList<>();
        for (String s : INVALID) {
            String got = buildVerdict(s);
            if (!got.equals("P-RUNID")) {
                wrong.add(escape(s) + ": " + got);
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void builder_surrogatePairAndReplacementCharacterRunIds_accepted() throws Exception {
        for (String s : VALID) {
            Snapshot built = base().runId(s).build();
            assertThat(built.runId()).isEqualTo(s);
        }
    }

    @Test
    void builder_invalidRunIdWithAnEarlierBrokenRule_reportsTheEarlierRule() {
        // P-RUNID is step 5: the definition rules (step 3) still come first.
        Snapshot decoded = decodeV01();
        String got;
        try {
            base().runId("coll\uD800").definition(new Definition(" x", decoded.definition().model(),
                    decoded.definition().maxTurns())).build();
            got = OK;
        } catch (PayloadRejectedException e) {
            got = e.rule().id();
        }
        assertThat(got).isEqualTo("P-DEF-NAME");
    }

    @Test
    void decode_escapedLoneSurrogatesInRunId_refusedAsRunId() {
        List<String> escapes = List.of("coll\\ud800", "coll\\udc00", "\\ud800coll", "co\\udbffll", "co\\udc00\\ud800ll",
                "coll\\ud83d", "\\ude00", "coll\\ud800\\u0041", "coll\\ud800\\ud800");
        List<String> wrong = new ArrayList<>();
        for (String e : escapes) {
            String got = verdict(edit(V01, RUN_ID_MEMBER, "\"run_id\":\"" + e + "\""));
            if (!got.equals("P-RUNID")) {
                wrong.add(e + ": " + got);
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void decode_invalidRawUtf8InRunId_refusedAsRunId() {
        // A stray continuation byte, 0xFF, a truncated 3-byte sequence, an encoded surrogate
        // (CESU-8), an overlong '/', at the end, start and middle.
        List<String> bad = List.of("80", "ff", "e282", "eda080", "c0af", "f4908080");
        List<String> wrong = new ArrayList<>();
        for (String b : bad) {
            for (String at : List.of("coll#", "#coll", "co#ll")) {
                String json = edit(V01, RUN_ID_MEMBER, "\"run_id\":\"" + at + "\"");
                String got = verdict(withBytes(json, "#", hex(b)));
                if (!got.equals("P-RUNID")) {
                    wrong.add(b + " in " + at + ": " + got);
                }
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void decode_genuineReplacementCharacterAndPairs_keepTheirVerdicts() {
        // Raw U+FFFD (EF BF BD) and a raw emoji are canonical: accepted.
        assertThat(verdict(edit(V01, RUN_ID_MEMBER, "\"run_id\":\"coll\uFFFD\""))).isEqualTo(OK);
        assertThat(verdict(edit(V01, RUN_ID_MEMBER, "\"run_id\":\"coll\uD83D\uDE00\""))).isEqualTo(OK);
        // Escaped, they decode to the same valid text, which the canonical encoder writes raw.
        assertThat(verdict(edit(V01, RUN_ID_MEMBER, "\"run_id\":\"coll\\ufffd\""))).isEqualTo("P-CANONICAL");
        assertThat(verdict(edit(V01, RUN_ID_MEMBER, "\"run_id\":\"coll\\ud83d\\ude00\""))).isEqualTo("P-CANONICAL");
    }

    @Test
    void decode_duplicateRunId_theWinningValueDecides() {
        // Later duplicate wins: a repaired first value is replaced, a repaired last value stays.
        String repairedThenClean = edit(V01, RUN_ID_MEMBER, "\"run_id\":\"coll\\ud800\",\"run_id\":\"run-1\"");
        String cleanThenRepaired = edit(V01, RUN_ID_MEMBER, "\"run_id\":\"run-1\",\"run_id\":\"coll\\ud800\"");
        String repairedThenNull = edit(V01, RUN_ID_MEMBER, "\"run_id\":\"coll\\ud800\",\"run_id\":null");
        assertThat(verdict(repairedThenClean)).isEqualTo("P-CANONICAL");
        assertThat(verdict(cleanThenRepaired)).isEqualTo("P-RUNID");
        assertThat(verdict(repairedThenNull)).isEqualTo("P-RUNID"); // null keeps the earlier value
    }

    @Test
    void decode_repairInAnotherString_doesNotTouchRunId() {
        // A lone surrogate in the text part is only non-canonical, as before.
        assertThat(verdict(edit(V01, "\"hello\"", "\"\\ud800\""))).isEqualTo("P-CANONICAL");
        byte[] rawInText = withBytes(edit(V01, "\"hello\"", "\"he#llo\""), "#", hex("ff"));
        assertThat(verdict(rawInText)).isEqualTo("P-CANONICAL");
    }

    // ---- helpers --------------------------------------------------------------------------

    private static Snapshot decodeV01() {
        try {
            return Snapshot.decode(utf8(V01));
        } catch (PayloadRejectedException e) {
            throw new AssertionError(e);
        }
    }

    /** A builder holding every value of corpus valid-01. */
    private static Snapshot.Builder base() {
        Snapshot s = decodeV01();
        Snapshot.Builder b = Snapshot.builder()
                .runId(s.runId())
                .definition(s.definition())
                .completedTurns(s.completedTurns())
                .planIdentity(s.planIdentity())
                .seenInteractionIds(s.seenInteractionIds())
                .lastSequence(s.lastSequence())
                .status(s.status());
        for (Message m : s.history()) {
            b.addMessage(m);
        }
        return b;
    }

    private static String buildVerdict(String runId) {
        try {
            base().runId(runId).build();
            return OK;
        } catch (PayloadRejectedException e) {
            return e.rule().id();
        }
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            sb.append(c < 0x80 ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return sb.toString();
    }

    /** A JSON value given as text is its exact UTF-8: text with an unpaired surrogate is refused, never replaced by '?'. */
    @Test
    void jsonValueOfText_unpairedSurrogate_refused() {
        assertThatThrownBy(() -> JsonValue.of("\"a\ud800\"")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JsonValue.of("\"a\udc00\"")).isInstanceOf(IllegalArgumentException.class);
        assertThat(JsonValue.of("\"a\ud83d\ude00\"").rawBytes()).isEqualTo("\"a\ud83d\ude00\"".getBytes(StandardCharsets.UTF_8));
    }

    /** Text for a message: one line, control, separator and bidi characters escaped, cut with its length. */
    @Test
    void safeText_bounded_escapesAndBounds() {
        assertThat(spice.authority.snapshot.json.SafeText.bounded("a\nb\u2028c\u202e", 80)).isEqualTo("a\\u000Ab\\u2028c\\u202E");
        assertThat(spice.authority.snapshot.json.SafeText.bounded("abcdef", 3)).isEqualTo("abc...(6 chars)");
        assertThat(spice.authority.snapshot.json.SafeText.bounded("ab\ud83d\ude00", 3)).isEqualTo("ab...(4 chars)");
    }
}
