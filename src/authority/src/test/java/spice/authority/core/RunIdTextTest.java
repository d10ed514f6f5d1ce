package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;

/**
 * The store's run-ID rule refuses text that is not valid Unicode (an unpaired UTF-16 surrogate)
 * at every entry point, before anything is hashed, locked or written: such a run ID would share
 * its hashed file name with others ("coll\ud800", "coll\udc00" and "coll?" encode alike with a
 * replacing encoder) and its record could never be verified, named or abandoned.
 */
class RunIdTextTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String SCOPE = "ab".repeat(32);

    /** Lone high and low surrogates, a reversed pair, at the start, middle and end. */
    private static final List<String> INVALID = List.of(
            "coll\uD800", "coll\uDC00", "\uD800coll", "\uDC00coll", "co\uD800ll", "co\uDC00ll",
            "co\uDC00\uD800ll", "\uD83D", "x\uD83D\uDE00\uDE00");

    /** A surrogate pair (emoji) and a genuine U+FFFD are valid run IDs. */
    private static final List<String> VALID = List.of("coll\uD83D\uDE00", "\uD83D\uDE00", "coll\uFFFD", "coll?");

    @Test
    void validRunId_unpairedSurrogates_refused_pairsAndReplacementCharacter_accepted() {
        List<String> wrong = new ArrayList<>();
        for (String s : INVALID) {
            if (RunRecord.validRunId(s)) {
                wrong.add("accepted " + escape(s));
            }
        }
        for (String s : VALID) {
            if (!RunRecord.validRunId(s)) {
                wrong.add("refused " + escape(s));
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void runRecord_unpairedSurrogateRunId_cannotBeConstructed() {
        for (String s : INVALID) {
            assertThatThrownBy(() -> new RunRecord(SCOPE, 1, s, 1, RunPhase.ACTIVE, null)).as(escape(s))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageNotContaining(s);
        }
    }

    @Test
    void fileStem_unpairedSurrogate_refusedNotHashedAsReplacement() {
        for (String s : INVALID) {
            assertThatThrownBy(() -> RecordCodec.fileStem(s)).as(escape(s)).isInstanceOf(IllegalArgumentException.class);
        }
        // Distinct valid run IDs keep distinct names.
        assertThat(RecordCodec.fileStem("coll?")).isNotEqualTo(RecordCodec.fileStem("coll\uFFFD"));
    }

    @Test
    void unpairedSurrogateRunId_isNoRunId_soNoOperationCanBeAskedForIt() {
        for (String s : INVALID) {
            assertThat(RunId.parse(s)).as(escape(s)).isEmpty();
            assertThatThrownBy(() -> new RunId(s)).as(escape(s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("valid Unicode text").hasMessageNotContaining(s);
        }
    }

    @Test
    void collidingLookAlikes_areNoRunIds_whileTheValidOneWorks() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun valid = a.start(new RunId("coll?"), NONE);
        // With a replacing encoder these named the very lock and state file "coll?" holds.
        assertThat(RunId.parse("coll\uD800")).isEmpty();
        assertThat(RunId.parse("coll\uDC00")).isEmpty();
        assertThat(a.inspect(new RunId("coll?"))).map(RunRecord::phase).contains(RunPhase.ACTIVE);
        valid.close();
        a.close();
    }

    @Test
    void start_surrogatePairAndReplacementCharacter_workAndVerify() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        for (String s : List.of("coll\uD83D\uDE00", "coll\uFFFD")) {
            ActiveRun r = a.start(new RunId(s), NONE);
            assertThat(dir.visibleFile(RecordCodec.fileStem(s) + ".state")).isNotNull();
            assertThat(a.inspect(new RunId(s))).map(RunRecord::runId).contains(s);
            r.close();
        }
        a.close();
    }

    @Test
    void verifyFile_runIdTheReaderHadToRepair_unverifiableEvenWithAValidMac() throws Exception {
        try (SecretKeyBytes k = SecretKeyBytes.copyOf(filled(7), SecretAccess.grant());
             HmacSha256 mac = new HmacSha256(k)) {
            RunRecord rec = new RunRecord(SCOPE, 1, "coll\uFFFD", 1, RunPhase.ACTIVE, null);
            byte[] file = RecordCodec.signedFile(rec, mac);
            assertThat(RecordCodec.verifyFile(file, mac)).isEqualTo(rec);
            // The MAC covers the canonical re-encoding, which is the same for a raw U+FFFD, an
            // escaped lone surrogate and an invalid byte: only the repair flag tells them apart.
            String text = new String(file, StandardCharsets.UTF_8);
            for (String repaired : List.of("coll\\ud800", "coll\\udc00")) {
                byte[] forged = text.replace("coll\uFFFD", repaired).getBytes(StandardCharsets.UTF_8);
                assertThatThrownBy(() -> RecordCodec.verifyFile(forged, mac)).as(repaired)
                        .isInstanceOf(RecordCodec.Unverifiable.class);
            }
            byte[] rawFf = replaceBytes(file, "coll\uFFFD".getBytes(StandardCharsets.UTF_8), new byte[] {'c', 'o', 'l', 'l', (byte) 0xFF});
            assertThatThrownBy(() -> RecordCodec.verifyFile(rawFf, mac)).isInstanceOf(RecordCodec.Unverifiable.class);
        }
    }

    // ---- helpers --------------------------------------------------------------------------

    private static byte[] filled(int v) {
        byte[] b = new byte[32];
        Arrays.fill(b, (byte) v);
        return b;
    }

    private static byte[] replaceBytes(byte[] in, byte[] from, byte[] to) {
        for (int i = 0; i + from.length <= in.length; i++) {
            if (Arrays.equals(in, i, i + from.length, from, 0, from.length)) {
                byte[] out = new byte[in.length - from.length + to.length];
                System.arraycopy(in, 0, out, 0, i);
                System.arraycopy(to, 0, out, i, to.length);
                System.arraycopy(in, i + from.length, out, i + to.length, in.length - i - from.length);
                return out;
            }
        }
        throw new IllegalArgumentException("not found");
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            sb.append(c < 0x80 ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return sb.toString();
    }
}
