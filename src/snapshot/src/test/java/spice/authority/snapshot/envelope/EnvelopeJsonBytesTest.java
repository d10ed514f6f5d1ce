package spice.authority.snapshot.envelope;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.proto.SnapshotEnvelope;

/**
 * {@link Envelope#toJsonBytes()} is {@link Envelope#toJson()} (JsonFormat) byte for byte: for
 * every combination of present and absent fields around the payload, payload lengths around a
 * base64 group, and run IDs holding every ASCII character and some beyond (JsonFormat escapes
 * quotes, backslashes, controls and HTML characters).
 */
class EnvelopeJsonBytesTest {

    @Test
    void sameBytesAsJsonFormat_forEveryFieldCombinationAndPayloadLength() throws Exception {
        SnapshotEnvelope full = EnvelopeFixtures.builderOf(EnvelopeFixtures.sealedV01()).build();
        List<UnaryOperator<SnapshotEnvelope.Builder>> clears = List.of(
                SnapshotEnvelope.Builder::clearFormat, SnapshotEnvelope.Builder::clearRunId,
                SnapshotEnvelope.Builder::clearLastSequence, SnapshotEnvelope.Builder::clearLifecycle,
                SnapshotEnvelope.Builder::clearSha256, SnapshotEnvelope.Builder::clearAuthority);
        List<String> differ = new ArrayList<>();
        int checked = 0;
        for (int mask = 0; mask < 1 << clears.size(); mask++) {
            for (int len : new int[] {0, 1, 2, 3, 4, 5, 6, 7, 100, 4096}) {
                SnapshotEnvelope.Builder b = full.toBuilder();
                for (int i = 0; i < clears.size(); i++) {
                    if ((mask & (1 << i)) != 0) {
                        clears.get(i).apply(b);
                    }
                }
                byte[] payload = new byte[len];
                for (int i = 0; i < len; i++) {
                    payload[i] = (byte) (i * 37 + mask);
                }
                b.setPayload(ByteString.copyFrom(payload));
                checked += compare(b.build(), "mask " + mask + " length " + len, differ);
            }
        }
        SnapshotEnvelope.Builder unknownEnum = full.toBuilder().setLifecycleValue(9);
        checked += compare(unknownEnum.build(), "unknown lifecycle value", differ);
        assertThat(differ).isEmpty();
        assertThat(checked).isEqualTo(64 * 10 + 1 - 1);
    }

    @Test
    void sameBytesAsJsonFormat_forRunIdsOfEveryAsciiCharacterAndBeyond() throws Exception {
        SnapshotEnvelope full = EnvelopeFixtures.builderOf(EnvelopeFixtures.sealedV01()).build();
        List<String> differ = new ArrayList<>();
        StringBuilder all = new StringBuilder();
        for (char c = 0; c < 0x80; c++) {
            all.append(c);
            compare(full.toBuilder().setRunId("r" + c + "x").build(), "run_id with U+" + Integer.toHexString(c), differ);
        }
        for (String s : List.of(all.toString(), "caf\u00e9", "\u20ac", "\u2028\u2029", "\ud83d\ude00", "\u0085\u00a0\ufeff")) {
            compare(full.toBuilder().setRunId(s).setFormat(s).build(), "run_id " + s.length() + " chars", differ);
        }
        assertThat(differ).isEmpty();
    }

    private static int compare(SnapshotEnvelope proto, String what, List<String> differ) throws Exception {
        if (proto.getSerializedSize() == 0) {
            return 0; // no envelope (E-SIZE): every field absent and no payload
        }
        Envelope e = Envelope.parse(proto.toByteArray());
        String want = e.toJson();
        String got = new String(e.toJsonBytes(), StandardCharsets.UTF_8);
        if (!want.equals(got)) {
            differ.add(what + ":\n" + want + "\n---\n" + got);
        }
        return 1;
    }
}
