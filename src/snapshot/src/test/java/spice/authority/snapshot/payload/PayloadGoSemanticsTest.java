package spice.authority.snapshot.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.payload.PayloadFixtures.OK;
import static spice.authority.snapshot.payload.PayloadFixtures.V01;
import static spice.authority.snapshot.payload.PayloadFixtures.V03;
import static spice.authority.snapshot.payload.PayloadFixtures.edit;
import static spice.authority.snapshot.payload.PayloadFixtures.hex;
import static spice.authority.snapshot.payload.PayloadFixtures.times;
import static spice.authority.snapshot.payload.PayloadFixtures.utf8;
import static spice.authority.snapshot.payload.PayloadFixtures.verdict;
import static spice.authority.snapshot.payload.PayloadFixtures.withBytes;

import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The reference decoder's semantics (wire-format.md b.3), and the rule each edge case must report
 * under this project's stricter canonical rule (ARCHITECTURE.md, "stricter" 1): P-CANONICAL only
 * when no more specific rule is broken. Every case is a minimal edit of a canonical corpus file.
 */
class PayloadGoSemanticsTest {

    /** Inserts {@code member} (with its leading comma) right after the top-level history array. */
    private static String afterHistory(String base, String member) {
        return edit(base, ",\"plan_identity\":", member + ",\"plan_identity\":");
    }

    @Nested
    class MemberNames {
        @Test
        void runId_upperCaseName_matchesSoOnlyNonCanonical() {
            assertThat(verdict(edit(V01, "\"run_id\":", "\"RUN_ID\":"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void runId_upperCaseNameWithBadValue_valueIsUsed() {
            assertThat(verdict(edit(V01, "\"run_id\":\"run-1\"", "\"RUN_ID\":\" run-1\""))).isEqualTo("P-RUNID");
        }

        @Test
        void status_longSNameU017F_foldsToStatus() {
            assertThat(verdict(edit(V01, "\"status\":", "\"\u017Ftatus\":"))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"status\":\"suspended\"", "\"\u017Ftatus\":\"running\""))).isEqualTo("P-STATUS");
        }

        @Test
        void status_longSNameAsEscape_foldsToStatus() {
            assertThat(verdict(edit(V01, "\"status\":\"suspended\"", "\"\\u017ftatus\":\"running\""))).isEqualTo("P-STATUS");
        }

        @Test
        void kind_kelvinSignU212A_foldsToKind() {
            assertThat(verdict(edit(V01, "\"kind\":\"text\"", "\"\u212Aind\":\"text\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"kind\":\"text\"", "\"\u212Aind\":\"txt\""))).isEqualTo("P-PART-KIND");
        }

        @Test
        void id_dottedCapitalIU0130_doesNotFoldSoUnknown() {
            // Go's foldRune uses simple folding: U+0130 and U+0131 are in no fold set with i.
            assertThat(verdict(edit(V01, "\"id\":\"input-1\"", "\"\u0130d\":\"input-1\""))).isEqualTo("P-UNKNOWN");
            assertThat(verdict(edit(V01, "\"id\":\"input-1\"", "\"\u0131d\":\"input-1\""))).isEqualTo("P-UNKNOWN");
        }

        @Test
        void runId_escapedAsciiInName_matchesExactlyButNonCanonical() {
            assertThat(verdict(edit(V01, "\"run_id\":", "\"\\u0072un_id\":"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void runId_dashInsteadOfUnderscore_unknown() {
            assertThat(verdict(edit(V01, "\"run_id\":", "\"run-id\":"))).isEqualTo("P-UNKNOWN");
        }

        @Test
        void part_unknownMemberAtDepth_unknown() {
            assertThat(verdict(edit(V01, "\"text\":\"hello\"", "\"text\":\"hello\",\"Text2\":1"))).isEqualTo("P-UNKNOWN");
            assertThat(verdict(edit(V01, "\"max_turns\":3", "\"max_turns\":3,\"x\":null"))).isEqualTo("P-UNKNOWN");
            assertThat(verdict(edit(V01, "\"tool_plan_id\":", "\"x\":{},\"tool_plan_id\":"))).isEqualTo("P-UNKNOWN");
        }
    }

    @Nested
    class Duplicates {
        @Test
        void status_duplicateLaterValid_laterWinsNonCanonical() {
            assertThat(verdict(edit(V01, "\"status\":\"suspended\"", "\"status\":\"running\",\"status\":\"suspended\"")))
                    .isEqualTo("P-CANONICAL");
        }

        @Test
        void status_duplicateLaterInvalid_laterWins() {
            assertThat(verdict(edit(V01, "\"status\":\"suspended\"", "\"status\":\"suspended\",\"status\":\"running\"")))
                    .isEqualTo("P-STATUS");
        }

        @Test
        void definition_duplicateWithOnlyMaxTurns_mergesKeepingNameAndModel() {
            // merged: name and model kept, max_turns 1, so suspended at 1 of 1 breaks P-SUSPENDED-TURNS;
            // a replacing decoder would report P-DEF-NAME.
            String p = edit(V01, ",\"completed_turns\":", ",\"definition\":{\"max_turns\":1},\"completed_turns\":");
            assertThat(verdict(p)).isEqualTo("P-SUSPENDED-TURNS");
        }

        @Test
        void planIdentity_duplicateWithOneMember_merges() {
            String p = edit(V01, ",\"seen_interaction_ids\":",
                    ",\"plan_identity\":{\"snapshot_compatibility_identity\":\"\"},\"seen_interaction_ids\":");
            assertThat(verdict(p)).isEqualTo("P-CANONICAL");
            p = edit(V01, ",\"seen_interaction_ids\":",
                    ",\"plan_identity\":{\"tool_plan_id\":\"generation 2\"},\"seen_interaction_ids\":");
            assertThat(verdict(p)).isEqualTo("P-TOOLPLAN");
        }

        @Test
        void history_duplicateWithFewerElements_truncatesAndMerges() {
            // [{},{}] merges into the first two messages and drops the rest: call-a and call-b stay unresolved.
            assertThat(verdict(afterHistory(V03, ",\"history\":[{},{}]"))).isEqualTo("P-UNRESOLVED");
            assertThat(verdict(afterHistory(V03, ",\"history\":[{}]"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void history_truncatedThenRegrown_reusesStaleElementsWithinCapacity() {
            // Go's SetLen within capacity exposes the earlier second message again (call-a, call-b pending).
            assertThat(verdict(afterHistory(V03, ",\"history\":[{}],\"history\":[{},{}]"))).isEqualTo("P-UNRESOLVED");
        }

        @Test
        void history_emptyOrNullBetween_dropsBackingSoRegrownElementsAreZero() {
            assertThat(verdict(afterHistory(V03, ",\"history\":[{}],\"history\":[],\"history\":[{},{}]"))).isEqualTo("P-MSG-ID");
            assertThat(verdict(afterHistory(V03, ",\"history\":[{}],\"history\":null,\"history\":[{},{}]"))).isEqualTo("P-MSG-ID");
        }

        @Test
        void message_duplicateHistoryWithRoleOnly_keepsIdAndParts() {
            assertThat(verdict(afterHistory(V01, ",\"history\":[{\"role\":\"assistant\"}]"))).isEqualTo("P-HIST-FIRST-USER");
        }

        @Test
        void part_duplicateHistoryWithPartName_mergesIntoExistingTextPart() {
            assertThat(verdict(afterHistory(V01, ",\"history\":[{\"parts\":[{\"name\":\"x\"}]}]"))).isEqualTo("P-PART-INACTIVE");
            assertThat(verdict(afterHistory(V01, ",\"history\":[{\"parts\":[{\"text\":\"bye\"}]}]"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void message_duplicateMemberInsideMessage_laterWins() {
            assertThat(verdict(edit(V01, "\"role\":\"user\"", "\"role\":\"user\",\"role\":\"tool\""))).isEqualTo("P-HIST-FIRST-USER");
        }

        @Test
        void interactionIds_duplicateWithNullElements_nullKeepsEarlierStrings() {
            String base = "\"seen_interaction_ids\":[]";
            assertThat(verdict(edit(V01, base, "\"seen_interaction_ids\":[\"b\",\"a\"],\"seen_interaction_ids\":[null,\"c\"]")))
                    .isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, base, "\"seen_interaction_ids\":[\"b\",\"a\"],\"seen_interaction_ids\":[null,null]")))
                    .isEqualTo("P-IA-ORDER");
            assertThat(verdict(edit(V01, base, "\"seen_interaction_ids\":[\"b\",\"a\"],\"seen_interaction_ids\":[null]")))
                    .isEqualTo("P-CANONICAL");
        }

        @Test
        void interactionIds_truncatedThenRegrown_reusesStaleStringWithinCapacity() {
            String p = edit(V01, "\"seen_interaction_ids\":[]",
                    "\"seen_interaction_ids\":[\"b\",\"a\"],\"seen_interaction_ids\":[null],\"seen_interaction_ids\":[null,null]");
            assertThat(verdict(p)).isEqualTo("P-IA-ORDER");
            p = edit(V01, "\"seen_interaction_ids\":[]",
                    "\"seen_interaction_ids\":[\"b\",\"a\"],\"seen_interaction_ids\":[],\"seen_interaction_ids\":[null,\"c\"]");
            assertThat(verdict(p)).isEqualTo("P-IA-TOKEN");
        }

        @Test
        void data_duplicate_laterRawValueReplacesEarlier() {
            assertThat(verdict(edit(V03, "\"data\":{\"path\":\"a.txt\"}", "\"data\":{\"path\":\"a.txt\"},\"data\":null")))
                    .isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V03, "\"data\":{\"path\":\"a.txt\"}", "\"data\":{\"path\":\"a.txt\"},\"DATA\":{\"path\":\"a.txt\"}")))
                    .isEqualTo("P-CANONICAL");
        }
    }

    @Nested
    class Nulls {
        @Test
        void runId_null_keepsZeroValue() {
            assertThat(verdict(edit(V01, "\"run_id\":\"run-1\"", "\"run_id\":null"))).isEqualTo("P-RUNID");
        }

        @Test
        void runId_nullAfterValue_keepsEarlierValue() {
            assertThat(verdict(edit(V01, "\"run_id\":\"run-1\"", "\"run_id\":\"run-1\",\"run_id\":null"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void completedTurns_null_isZero() {
            assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":null"))).isEqualTo("P-SUSPENDED-TURNS");
        }

        @Test
        void definition_nullAfterObject_keepsObject() {
            assertThat(verdict(edit(V01, ",\"completed_turns\":", ",\"definition\":null,\"completed_turns\":"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void definition_nullOnly_isZero() {
            String p = edit(V01, "\"definition\":{\"name\":\"test\",\"model\":\"model\",\"max_turns\":3}", "\"definition\":null");
            assertThat(verdict(p)).isEqualTo("P-DEF-NAME");
        }

        @Test
        void interactionIds_null_emptyList() {
            assertThat(verdict(edit(V01, "\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":null"))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":[\" bad\"],\"seen_interaction_ids\":null")))
                    .isEqualTo("P-CANONICAL");
        }

        @Test
        void interactionIds_missing_emptyList() {
            assertThat(verdict(edit(V01, ",\"seen_interaction_ids\":[]", ""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void history_nullAfterArray_emptiesIt() {
            assertThat(verdict(afterHistory(V01, ",\"history\":null"))).isEqualTo("P-HIST-COUNT");
        }

        @Test
        void parts_nullElement_zeroPart() {
            assertThat(verdict(edit(V01, "[{\"kind\":\"text\",\"text\":\"hello\"}]", "[null]"))).isEqualTo("P-PART-KIND");
        }

        @Test
        void toolCall_dataNull_presentValidAndCanonical() throws Exception {
            byte[] p = utf8(edit(V03, "\"data\":{\"path\":\"a.txt\"}", "\"data\":null"));
            Snapshot s = Snapshot.decode(p);
            assertThat(s.canonicalBytes()).isEqualTo(p);
            Part.ToolCall call = (Part.ToolCall) s.history().get(4).parts().get(0);
            assertThat(call.data().rawBytes()).isEqualTo(utf8("null"));
        }

        @Test
        void textPart_dataNull_inactiveMemberPresent() {
            assertThat(verdict(edit(V01, "\"text\":\"hello\"", "\"text\":\"hello\",\"data\":null"))).isEqualTo("P-PART-INACTIVE");
        }

        @Test
        void toolCall_dataMissing_dataRule() {
            assertThat(verdict(edit(V03, ",\"data\":{\"path\":\"a.txt\"}", ""))).isEqualTo("P-DATA");
        }
    }

    @Nested
    class Utf8AndEscapes {
        private static final byte[] FF = {(byte) 0xFF};

        @Test
        void text_invalidUtf8Byte_replacedThenNonCanonical() {
            assertThat(verdict(withBytes(V01, "hello", hex("68656cff6c6f")))).isEqualTo("P-CANONICAL");
        }

        @Test
        void runId_invalidUtf8Byte_refusedAsRunId() {
            // Stricter than the reference: a run ID the decoder had to repair is not valid text.
            assertThat(verdict(withBytes(V01, "run-1", hex("72756e2dff")))).isEqualTo("P-RUNID");
        }

        @Test
        void messageId_invalidBytesDecodeTo3BytesEach_byteLimitBreaksFirst() {
            // 42 x U+FFFD = 126 bytes: fine; 43 = 129 bytes > 128.
            assertThat(verdict(withBytes(V01, "input-1", times(FF, 42)))).isEqualTo("P-CANONICAL");
            assertThat(verdict(withBytes(V01, "input-1", times(FF, 43)))).isEqualTo("P-MSG-ID");
        }

        @Test
        void runId_invalidBytes_refusedAsRunIdAtAnyLength() {
            assertThat(verdict(withBytes(V01, "run-1", times(FF, 32)))).isEqualTo("P-RUNID");
            assertThat(verdict(withBytes(V01, "run-1", times(FF, 33)))).isEqualTo("P-RUNID");
        }

        @Test
        void messageId_overlongSurrogateAndOutOfRangeSequences_oneReplacementPerByte() {
            // F4 90 80 80 (above U+10FFFF): 4 replacements; ED A0 80 (surrogate): 3; C0 80 (overlong): 2;
            // E2 82 cut short by the closing quote: 2. 10*4 + 3 = 43 -> 129 bytes.
            byte[] forty = times(hex("f4908080"), 10);
            byte[] id42 = concat(times(hex("eda080"), 10), times(hex("c080"), 6));
            assertThat(verdict(withBytes(V01, "input-1", concat(forty, hex("eda080"))))).isEqualTo("P-MSG-ID");
            assertThat(verdict(withBytes(V01, "input-1", id42))).isEqualTo("P-CANONICAL");
            assertThat(verdict(withBytes(V01, "input-1", concat(times(hex("c080"), 20), hex("e282"))))).isEqualTo("P-CANONICAL");
            assertThat(verdict(withBytes(V01, "input-1", concat(times(hex("c080"), 20), hex("e282ff"))))).isEqualTo("P-MSG-ID");
        }

        @Test
        void text_loneSurrogateEscape_replacedThenNonCanonical() {
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\ud800\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\udc00x\""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void messageId_loneSurrogateEscapes_countAsReplacementCharacters() {
            assertThat(verdict(edit(V01, "\"input-1\"", "\"" + "\\ud800".repeat(42) + "\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"input-1\"", "\"" + "\\ud800".repeat(43) + "\""))).isEqualTo("P-MSG-ID");
        }

        @Test
        void messageId_validSurrogatePairEscapes_decodeToFourBytes() {
            assertThat(verdict(edit(V01, "\"input-1\"", "\"" + "\\ud83d\\ude00".repeat(32) + "\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"input-1\"", "\"" + "\\ud83d\\ude00".repeat(33) + "\""))).isEqualTo("P-MSG-ID");
        }

        @Test
        void messageId_highSurrogateBeforeNonSurrogateEscape_secondEscapeKept() {
            // U+FFFD then 'A' = 4 bytes each: 33 x 4 = 132 > 128.
            assertThat(verdict(edit(V01, "\"input-1\"", "\"" + "\\ud800\\u0041".repeat(33) + "\""))).isEqualTo("P-MSG-ID");
            assertThat(verdict(edit(V01, "\"input-1\"", "\"" + "\\ud800\\u0041".repeat(32) + "\""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void text_replacementCharacterEscaped_nonCanonicalRawAccepted() {
            // Go's encoder writes an invalid UTF-8 byte as the escape u-fffd, but that decodes to a valid U+FFFD,
            // which the canonical encoder writes raw. (Noted in the report as a spec consequence.)
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\\ufffd\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\uFFFD\""))).isEqualTo(OK);
        }

        @Test
        void text_unicodeEscapeOfAscii_nonCanonical() {
            assertThat(verdict(edit(V01, "\"hello\"", "\"hell\\u006f\""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void version_escapedSlash_nonCanonicalNotVersion() {
            assertThat(verdict(edit(V01, "snapshot/v1alpha2", "snapshot\\/v1alpha2"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void text_htmlCharacters_mustBeEscaped() {
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\\u003cb\\u003e\\u0026\""))).isEqualTo(OK);
            assertThat(verdict(edit(V01, "\"hello\"", "\"a<b\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\\u003Cb\""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void text_lineSeparators_mustBeEscaped() {
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\\u2028b\\u2029\""))).isEqualTo(OK);
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\u2028b\""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void text_controlCharacters_goShortAndLongEscapes() {
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\""))).isEqualTo(OK);
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\u0008\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\u000c\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\u001F\""))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V01, "\"hello\"", "\"\\u007f\""))).isEqualTo("P-CANONICAL");
        }

        @Test
        void text_rawControlByte_syntaxError() {
            assertThat(verdict(edit(V01, "\"hello\"", "\"a\u0001\""))).isEqualTo("P-JSON");
        }

        @Test
        void data_escapesAndNumberSpellings_keptByCompaction() {
            assertThat(verdict(edit(V03, "{\"path\":\"a.txt\"}", "{\"path\":\"a\\/b\\u0041\",\"n\":[2.50,-0.0,1e3,1E+3]}"))).isEqualTo(OK);
        }

        @Test
        void data_whiteSpaceOrRawHtml_nonCanonical() {
            assertThat(verdict(edit(V03, "{\"path\":\"a.txt\"}", "{\"path\": \"a.txt\"}"))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V03, "{\"path\":\"a.txt\"}", "{\"path\":\"a<b\"}"))).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V03, "{\"path\":\"a.txt\"}", "{\"path\":\"a\\u003cb\"}"))).isEqualTo(OK);
            assertThat(verdict(edit(V03, "{\"path\":\"a.txt\"}", "{\"path\":\"a\u2029b\"}"))).isEqualTo("P-CANONICAL");
        }

        @Test
        void data_invalidUtf8InsideString_passesThroughCompactionUnchanged() {
            // wire-format b.2: json.Valid does not check UTF-8 and compaction keeps the bytes, so the
            // canonical re-encoding is byte-identical. (Spec ambiguity noted in the report.)
            assertThat(verdict(withBytes(V03, "a.txt", hex("61ff74")))).isEqualTo(OK);
        }
    }

    @Nested
    class WhiteSpaceAndTopLevel {
        @Test
        void payload_leadingWhiteSpace_nonCanonical() {
            assertThat(verdict(" " + V01)).isEqualTo("P-CANONICAL");
            assertThat(verdict("\r\n\t" + V01)).isEqualTo("P-CANONICAL");
        }

        @Test
        void payload_trailingNewline_isWhiteSpaceSoNonCanonical() {
            assertThat(verdict(V01 + "\n")).isEqualTo("P-CANONICAL");
            assertThat(verdict(V01 + " \t\r\n")).isEqualTo("P-CANONICAL");
        }

        @Test
        void payload_byteOrderMark_syntaxError() {
            assertThat(verdict("\uFEFF" + V01)).isEqualTo("P-JSON");
        }

        @Test
        void payload_nonJsonWhiteSpace_leadingIsSyntaxTrailingIsTrailing() {
            assertThat(verdict("\f" + V01)).isEqualTo("P-JSON");
            assertThat(verdict(V01 + "\f")).isEqualTo("P-TRAILING");
            assertThat(verdict(V01 + "\u00A0")).isEqualTo("P-TRAILING");
        }

        @Test
        void payload_secondValueOrGarbage_trailing() {
            assertThat(verdict(V01 + "{}")).isEqualTo("P-TRAILING");
            assertThat(verdict(V01 + " x")).isEqualTo("P-TRAILING");
            assertThat(verdict(V01 + "}")).isEqualTo("P-TRAILING");
        }

        @Test
        void topLevel_null_zeroSnapshotFailsVersion() {
            assertThat(verdict("null")).isEqualTo("P-VERSION");
            assertThat(verdict("{}")).isEqualTo("P-VERSION");
        }

        @Test
        void topLevel_nullThenGarbage_trailing() {
            assertThat(verdict("null x")).isEqualTo("P-TRAILING");
        }

        @Test
        void topLevel_nonObject_type() {
            assertThat(verdict("[]")).isEqualTo("P-TYPE");
            assertThat(verdict("[1,{\"a\":2}]")).isEqualTo("P-TYPE");
            assertThat(verdict("\"x\"")).isEqualTo("P-TYPE");
            assertThat(verdict("7")).isEqualTo("P-TYPE");
            assertThat(verdict("true")).isEqualTo("P-TYPE");
        }

        @Test
        void topLevel_arrayThenGarbage_typeBeforeTrailing() {
            assertThat(verdict("[] x")).isEqualTo("P-TYPE");
        }

        @Test
        void topLevel_onlyWhiteSpaceOrTruncated_syntax() {
            assertThat(verdict(" ")).isEqualTo("P-JSON");
            assertThat(verdict(V01.substring(0, V01.length() - 1))).isEqualTo("P-JSON");
            assertThat(verdict("{\"version\"")).isEqualTo("P-JSON");
        }

        @Test
        void payload_empty_size() {
            assertThat(verdict(new byte[0])).isEqualTo("P-SIZE");
        }

        @Test
        void payload_16MiBPlusOne_refusedBeforeParsing() {
            byte[] big = new byte[16 * 1024 * 1024 + 1];
            Arrays.fill(big, (byte) '[');
            Assertions.assertTimeoutPreemptively(Duration.ofMillis(500), () -> assertThat(verdict(big)).isEqualTo("P-SIZE"));
        }

        @Test
        void payload_exactly16MiB_parsed() {
            byte[] base = utf8(V01);
            byte[] big = new byte[16 * 1024 * 1024];
            Arrays.fill(big, 0, big.length - base.length, (byte) ' ');
            System.arraycopy(base, 0, big, big.length - base.length, base.length);
            assertThat(verdict(big)).isEqualTo("P-CANONICAL");
        }
    }

    @Nested
    class Numbers {
        @Test
        void completedTurns_fractionExponentOrSign_type() {
            for (String n : new String[] {"1.0", "1e0", "1E0", "-1", "-0", "0.5"}) {
                assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":" + n))).as(n).isEqualTo("P-TYPE");
            }
        }

        @Test
        void completedTurns_leadingZeroOrPlus_syntax() {
            for (String n : new String[] {"01", "+1", "1.", ".5", "1e", "00", "-"}) {
                assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":" + n))).as(n).isEqualTo("P-JSON");
            }
        }

        @Test
        void maxTurns_twoTo32_overflowsUint32() {
            assertThat(verdict(edit(V01, "\"max_turns\":3", "\"max_turns\":4294967296"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"max_turns\":3", "\"max_turns\":4294967295"))).isEqualTo("P-DEF-TURNS");
        }

        @Test
        void completedTurns_twoTo32_overflowsUint32() {
            assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":4294967296"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":4294967295"))).isEqualTo("P-TURNS");
        }

        @Test
        void lastSequence_twoTo64_overflowsUint64() {
            assertThat(verdict(edit(V01, "\"last_sequence\":7", "\"last_sequence\":18446744073709551616"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"last_sequence\":7", "\"last_sequence\":99999999999999999999"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"last_sequence\":7", "\"last_sequence\":18446744073709551615"))).isEqualTo("P-SEQ");
            assertThat(verdict(edit(V01, "\"last_sequence\":7", "\"last_sequence\":18446744073709551614"))).isEqualTo(OK);
        }

        @Test
        void lastSequence_twoTo63_unsignedAccepted() throws Exception {
            Snapshot s = Snapshot.decode(utf8(edit(V01, "\"last_sequence\":7", "\"last_sequence\":9223372036854775808")));
            assertThat(Long.toUnsignedString(s.lastSequence())).isEqualTo("9223372036854775808");
        }

        @Test
        void members_wrongJsonType_type() {
            assertThat(verdict(edit(V01, "\"run_id\":\"run-1\"", "\"run_id\":1"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":\"1\""))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":true"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":{}"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":[1]"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"seen_interaction_ids\":[]", "\"seen_interaction_ids\":\"a\""))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"version\":\"spice.agent.snapshot/v1alpha2\"", "\"version\":[]"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "{\"name\":\"test\",\"model\":\"model\",\"max_turns\":3}", "[]"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "[{\"kind\":\"text\",\"text\":\"hello\"}]", "[\"text\"]"))).isEqualTo("P-TYPE");
            assertThat(verdict(edit(V01, "\"text\":\"hello\"", "\"text\":{}"))).isEqualTo("P-TYPE");
        }
    }

    @Nested
    class Depth {
        private String nestedData(int arrays) {
            return edit(V03, "{\"path\":\"a.txt\"}", "[".repeat(arrays) + "]".repeat(arrays));
        }

        @Test
        void data_nestingToTotalDepth10000_accepted() {
            // top object 1, history 2, message 3, parts 4, part 5: data's first '[' is depth 6.
            assertThat(verdict(nestedData(9_995))).isEqualTo(OK);
        }

        @Test
        void data_nestingToTotalDepth10001_syntax() {
            assertThat(verdict(nestedData(9_996))).isEqualTo("P-JSON");
        }

        @Test
        void unknownMember_nestingBeyondLimit_syntaxBeatsUnknown() {
            String ok = edit(V01, "\"run_id\":", "\"x\":" + "[".repeat(9_999) + "]".repeat(9_999) + ",\"run_id\":");
            String deep = edit(V01, "\"run_id\":", "\"x\":" + "[".repeat(10_000) + "]".repeat(10_000) + ",\"run_id\":");
            assertThat(verdict(ok)).isEqualTo("P-UNKNOWN");
            assertThat(verdict(deep)).isEqualTo("P-JSON");
        }

        @Test
        void topLevel_hostileUnclosedNesting_syntaxNoStackOverflow() {
            assertThat(verdict("[".repeat(1_000_000))).isEqualTo("P-JSON");
            assertThat(verdict("{\"a\":".repeat(200_000))).isEqualTo("P-JSON");
        }
    }

    @Nested
    class ErrorOrder {
        @Test
        void unknownBeforeType_firstInDocumentOrderWins() {
            String p = edit(edit(V01, "\"run_id\":", "\"bogus\":1,\"run_id\":"), "\"completed_turns\":1", "\"completed_turns\":\"1\"");
            assertThat(verdict(p)).isEqualTo("P-UNKNOWN");
        }

        @Test
        void typeBeforeUnknown_firstInDocumentOrderWins() {
            String p = edit(edit(V01, "\"run_id\":\"run-1\"", "\"run_id\":1"), "\"status\":\"suspended\"", "\"status\":\"suspended\",\"bogus\":1");
            assertThat(verdict(p)).isEqualTo("P-TYPE");
        }

        @Test
        void nestedUnknownBeforeLaterType_unknown() {
            String p = edit(edit(V01, "\"text\":\"hello\"", "\"text\":\"hello\",\"extra\":1"), "\"last_sequence\":7", "\"last_sequence\":\"7\"");
            assertThat(verdict(p)).isEqualTo("P-UNKNOWN");
        }

        @Test
        void unknownThenLaterSyntaxError_syntaxWins() {
            String p = edit(V01, "\"run_id\":", "\"bogus\":1,\"run_id\":");
            assertThat(verdict(p.substring(0, p.length() - 1))).isEqualTo("P-JSON");
        }

        @Test
        void typeThenSyntaxErrorInsideData_syntaxWins() {
            String p = edit(edit(V03, "\"completed_turns\":2", "\"completed_turns\":\"2\""), "{\"path\":\"a.txt\"}", "{\"path\":\"a.txt\",}");
            assertThat(verdict(p)).isEqualTo("P-JSON");
        }

        @Test
        void unknownThenTrailingGarbage_unknownBeforeTrailing() {
            assertThat(verdict(edit(V01, "\"run_id\":", "\"bogus\":1,\"run_id\":") + "x")).isEqualTo("P-UNKNOWN");
        }

        @Test
        void typeThenTrailingGarbage_typeBeforeTrailing() {
            assertThat(verdict(edit(V01, "\"completed_turns\":1", "\"completed_turns\":-1") + "{}")).isEqualTo("P-TYPE");
        }

        @Test
        void trailingGarbageOnOtherwiseInvalidPayload_trailingBeforeRules() {
            assertThat(verdict(edit(V01, "\"status\":\"suspended\"", "\"status\":\"running\"") + "x")).isEqualTo("P-TRAILING");
        }

        @Test
        void typeError_beforeValidationRules() {
            String p = edit(edit(V01, "\"version\":\"spice.agent.snapshot/v1alpha2\"", "\"version\":\"x\""), "\"last_sequence\":7", "\"last_sequence\":7.0");
            assertThat(verdict(p)).isEqualTo("P-TYPE");
        }
    }

    @Test
    void decode_callerReusesArray_snapshotUnaffected() throws Exception {
        byte[] p = utf8(V01);
        Snapshot s = Snapshot.decode(p);
        Arrays.fill(p, (byte) 'x');
        assertThat(s.canonicalBytes()).isEqualTo(utf8(V01));
        assertThatThrownBy(() -> Snapshot.decode(p)).isInstanceOf(PayloadRejectedException.class);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
