package spice.authority.snapshot.envelope;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.GENERATION;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.SCOPE;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.authority;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.concat;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.filled;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.proto;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.strict;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.structural;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.payload.PayloadFixtures;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;

/**
 * Envelope rules: wire-format.md a.3 in order, the lenient E-PAYLOAD-JSON decode, this project's
 * strict encoding (no unknown fields, canonical bytes) and the stricter payload and agreement rules.
 */
class EnvelopeRulesTest {
    private static final String V01 = PayloadFixtures.V01;
    private static final String V01_ID = "\"run_id\":\"run-1\"";

    private static EnvelopeFixtures.Fields f() {
        return new EnvelopeFixtures.Fields();
    }

    @Test
    void handEncoder_reproducesSealedEnvelopeBytes() {
        assertThat(f().signed().encode()).isEqualTo(EnvelopeFixtures.sealedV01().toBinary());
    }

    @Test
    void sealedV01_passesParseStrictAndVerify() throws Exception {
        Envelope e = EnvelopeFixtures.sealedV01();
        Envelopes.Strict s = Envelopes.validateStrict(Envelope.parse(e.toBinary()));
        try (AuthorityKey key = EnvelopeFixtures.key()) {
            Envelopes.verify(s.validated(), key::verify);
        }
        assertThat(s.snapshot().canonicalBytes()).isEqualTo(V01.getBytes(UTF_8));
        assertThat(e.lifecycleNumber()).isEqualTo(1);
        assertThat(e.lastSequence()).isEqualTo(7);
    }

    @Test
    void seal_everyStatus_mapsToLifecycleAndPassesStrict() throws Exception {
        String[][] map = {{"completed", "2"}, {"failed", "3"}, {"cancelled", "4"}};
        for (String[] m : map) {
            String json = V01.replace("\"suspended\"", "\"" + m[0] + "\"");
            Envelope e = EnvelopeFixtures.sealed(json);
            assertThat(e.lifecycleNumber()).as(m[0]).isEqualTo(Integer.parseInt(m[1]));
            assertThat(strict(e.toBinary())).as(m[0]).isEqualTo("OK");
        }
    }

    @Nested
    class StructuralOrder {
        @Test
        void format_v1alpha1_eFormat() {
            var x = f().dummyAuthority();
            x.format = "spice.agent.snapshot/v1alpha1".getBytes(UTF_8);
            assertThat(structural(x.encode())).isEqualTo("E-FORMAT");
        }

        @Test
        void format_emptyOrPadded_eFormat() {
            var x = f().dummyAuthority();
            x.format = new byte[0];
            assertThat(structural(x.encode())).isEqualTo("E-FORMAT");
            x.format = (Snapshot.FORMAT + " ").getBytes(UTF_8);
            assertThat(structural(x.encode())).isEqualTo("E-FORMAT");
        }

        @Test
        void format_badWithEveryLaterRuleBroken_eFormatFirst() {
            var x = f();
            x.format = "x".getBytes(UTF_8);
            x.runId = new byte[0];
            x.lastSequence = 0;
            x.lifecycle = 0;
            x.payload = new byte[0];
            assertThat(structural(x.encode())).isEqualTo("E-FORMAT");
        }

        @Test
        void runId_129Bytes_eRunId() {
            String id = "r".repeat(129);
            assertThat(structural(f().runId(id).payload(V01.replace(V01_ID, "\"run_id\":\"" + id + "\"")).dummyAuthority().encode()))
                    .isEqualTo("E-RUNID");
        }

        @Test
        void runId_128Bytes_structurallyValidButPayloadRejectsIt() {
            String id = "r".repeat(128);
            byte[] env = f().runId(id).payload(V01.replace(V01_ID, "\"run_id\":\"" + id + "\"")).signed().encode();
            assertThat(structural(env)).isEqualTo("OK");
            assertThat(strict(env)).isEqualTo("E-PAYLOAD P-RUNID");
        }

        @Test
        void runId_emptyOrSurroundingGoSpace_eRunId() {
            for (String id : new String[] {"", " run-1", "run-1\u0085", "\u00A0run-1", "run-1\u2007", "run-1\u202F"}) {
                assertThat(structural(f().runId(id).dummyAuthority().encode())).as(id).isEqualTo("E-RUNID");
            }
        }

        @Test
        void runId_edgeU001C_notGoSpaceSoStructurallyValid_strictRejectsControl() {
            String id = "\u001Crun-1";
            byte[] env = f().runId(id).payload(V01.replace(V01_ID, "\"run_id\":\"\\u001crun-1\"")).signed().encode();
            assertThat(structural(env)).isEqualTo("OK");
            assertThat(strict(env)).isEqualTo("E-PAYLOAD P-RUNID");
        }

        @Test
        void runId_badBeforeSequence_eRunId() {
            var x = f().runId("").dummyAuthority();
            x.lastSequence = 0;
            assertThat(structural(x.encode())).isEqualTo("E-RUNID");
        }

        @Test
        void lastSequence_zeroOrMax_eSeq() {
            var x = f().dummyAuthority();
            x.lastSequence = 0;
            assertThat(structural(x.encode())).isEqualTo("E-SEQ");
            x.lastSequence = -1L;
            assertThat(structural(x.encode())).isEqualTo("E-SEQ");
        }

        @Test
        void lastSequence_twoTo64Minus2_structurallyValid() {
            var x = f().dummyAuthority();
            x.lastSequence = -2L;
            assertThat(structural(x.encode())).isEqualTo("OK");
        }

        @Test
        void lastSequence_badBeforeLifecycle_eSeq() {
            var x = f().dummyAuthority();
            x.lastSequence = 0;
            x.lifecycle = 0;
            assertThat(structural(x.encode())).isEqualTo("E-SEQ");
        }

        @ParameterizedTest
        @ValueSource(longs = {0, 5, 7, 0x7FFFFFFFL, -1L})
        void lifecycle_unknownNumber_eLifecycle(long lifecycle) {
            var x = f().dummyAuthority();
            x.lifecycle = lifecycle;
            assertThat(structural(x.encode())).isEqualTo("E-LIFECYCLE");
        }

        @Test
        void lifecycle_badBeforePayloadSize_eLifecycle() {
            var x = f().dummyAuthority().payload(new byte[0]);
            x.lifecycle = 0;
            assertThat(structural(x.encode())).isEqualTo("E-LIFECYCLE");
        }

        @Test
        void payload_empty_ePayloadSize() {
            assertThat(structural(f().payload(new byte[0]).dummyAuthority().encode())).isEqualTo("E-PAYLOAD-SIZE");
        }

        @Test
        void payload_emptyWithWrongDigest_sizeBeforeDigest() {
            var x = f().payload(new byte[0]).dummyAuthority();
            x.sha256 = filled(32, 1);
            assertThat(structural(x.encode())).isEqualTo("E-PAYLOAD-SIZE");
        }

        @Test
        void payload_16MiBPlusOne_ePayloadSize_16MiB_passes() {
            byte[] head = "{\"run_id\":\"run-1\"}".getBytes(UTF_8);
            byte[] p = new byte[16 * 1024 * 1024 + 1];
            Arrays.fill(p, (byte) ' ');
            System.arraycopy(head, 0, p, 0, head.length);
            assertThat(structural(f().payload(p).dummyAuthority().encode())).isEqualTo("E-PAYLOAD-SIZE");
            assertThat(structural(f().payload(Arrays.copyOf(p, p.length - 1)).dummyAuthority().encode())).isEqualTo("OK");
        }

        @Test
        void digest_wrong_eDigest() {
            var x = f().dummyAuthority();
            x.sha256 = x.sha256.clone();
            x.sha256[31] ^= 1;
            assertThat(structural(x.encode())).isEqualTo("E-DIGEST");
            x.sha256 = Arrays.copyOf(x.sha256, 31);
            assertThat(structural(x.encode())).isEqualTo("E-DIGEST");
            x.sha256 = new byte[0];
            assertThat(structural(x.encode())).isEqualTo("E-DIGEST");
            x.sha256 = Arrays.copyOf(EnvelopeFixtures.sha256(x.payload), 33);
            assertThat(structural(x.encode())).isEqualTo("E-DIGEST");
        }

        @Test
        void digest_wrongWithPayloadNotJson_digestFirst() {
            var x = f().payload("not json").dummyAuthority();
            x.sha256 = filled(32, 0);
            assertThat(structural(x.encode())).isEqualTo("E-DIGEST");
        }

        @Test
        void payloadJson_badWithRunIdMismatchAndNoAuthority_payloadJsonFirst() {
            assertThat(structural(f().payload("{\"run_id\":\"other\"} x").encode())).isEqualTo("E-PAYLOAD-JSON");
        }

        @Test
        void runIdMatch_mismatchWithoutAuthority_runIdMatchFirst() {
            assertThat(structural(f().payload("{\"run_id\":\"other\"}").encode())).isEqualTo("E-RUNID-MATCH");
        }
    }

    @Nested
    class LenientPayloadJson {
        @ParameterizedTest
        @ValueSource(strings = {
            "[]", "[{\"run_id\":\"run-1\"}]", "\"run-1\"", "1", "true",
            "{\"run_id\":1}", "{\"run_id\":{}}", "{\"run_id\":[\"run-1\"]}", "{\"run_id\":true}",
            "{\"run_id\":\"run-1\"} x", "{\"run_id\":\"run-1\"}{}", "{\"run_id\":\"run-1\"}\n}",
            "{\"run_id\":\"run-1\"", "{\"run_id\":\"run-1\",}", "{'run_id':'run-1'}", "\uFEFF{\"run_id\":\"run-1\"}",
            "{\"run_id\":1,\"run_id\":\"run-1\"}", "{\"RUN_ID\":2,\"run_id\":\"run-1\"}", "{\"run_id\":\"run-1\",\"x\":[1,]}",
            "{\"run_id\":\"run-1\",\"x\":01}", " "
        })
        void payload_notLenientRecord_ePayloadJson(String payload) {
            assertThat(structural(f().payload(payload).dummyAuthority().encode())).isEqualTo("E-PAYLOAD-JSON");
        }

        @ParameterizedTest
        @ValueSource(strings = {
            "{\"run_id\":\"run-1\"}", " \t\n{\"run_id\":\"run-1\"}\r\n", "{\"RUN_ID\":\"run-1\"}", "{\"Run_Id\":\"run-1\"}",
            "{\"run_id\":\"run-2\",\"run_id\":\"run-1\"}", "{\"run_id\":\"run-1\",\"run_id\":null}",
            "{\"run_id\":\"run\\u002d1\"}", "{\"version\":\"x\",\"other\":[1,{\"a\":null}],\"run_id\":\"run-1\"}",
            "{\"run_id\":\"run-1\",\"history\":{},\"status\":7}"
        })
        void payload_lenientRecordWithMatchingRunId_structurallyValid(String payload) {
            assertThat(structural(f().payload(payload).dummyAuthority().encode())).isEqualTo("OK");
        }

        @ParameterizedTest
        @ValueSource(strings = {
            "null", "{}", "{\"run_id\":\"run-2\"}", "{\"run_id\":\"run-1\",\"run_id\":\"run-2\"}", "{\"run_id\":\"RUN-1\"}",
            "{\"run_id\":\"run-1 \"}", "{\"run_id\":null}", "{\"run-id\":\"run-1\"}"
        })
        void payload_runIdDiffers_eRunIdMatch(String payload) {
            assertThat(structural(f().payload(payload).dummyAuthority().encode())).isEqualTo("E-RUNID-MATCH");
        }

        @Test
        void payload_nestingDepth_limitAppliesToLenientDecode() {
            String ok = "{\"run_id\":\"run-1\",\"x\":" + "[".repeat(9_999) + "]".repeat(9_999) + "}";
            String deep = "{\"run_id\":\"run-1\",\"x\":" + "[".repeat(10_000) + "]".repeat(10_000) + "}";
            assertThat(structural(f().payload(ok).dummyAuthority().encode())).isEqualTo("OK");
            assertThat(structural(f().payload(deep).dummyAuthority().encode())).isEqualTo("E-PAYLOAD-JSON");
        }

        @Test
        void payload_invalidUtf8RunIdDecodesToReplacement_matchesButStrictRejects() {
            byte[] p = PayloadFixtures.withBytes(V01, "run-1", PayloadFixtures.hex("72756e2dff"));
            byte[] env = f().runId("run-\uFFFD").payload(p).signed().encode();
            assertThat(structural(env)).isEqualTo("OK");
            assertThat(strict(env)).isEqualTo("E-PAYLOAD P-RUNID");
        }

        @Test
        void payload_versionAndUpperCaseRunIdOnly_structurallyValidStrictRejects() {
            byte[] env = f().payload("{\"version\":\"x\",\"RUN_ID\":\"run-1\"}").signed().encode();
            assertThat(structural(env)).isEqualTo("OK");
            assertThat(strict(env)).isEqualTo("E-PAYLOAD P-VERSION");
        }

        @Test
        void payload_nonCanonicalV01_strictRejectsWithPayloadRule() {
            byte[] env = f().payload(V01 + "\n").signed().encode();
            assertThat(structural(env)).isEqualTo("OK");
            assertThat(strict(env)).isEqualTo("E-PAYLOAD P-CANONICAL");
            env = f().payload(V01.replace("\"status\":\"suspended\"", "\"status\":\"running\"")).signed().encode();
            assertThat(strict(env)).isEqualTo("E-PAYLOAD P-STATUS");
        }
    }

    @Nested
    class AuthorityShape {
        @Test
        void authority_missing_eAuthShape() {
            assertThat(structural(f().encode())).isEqualTo("E-AUTH-SHAPE");
        }

        @Test
        void authority_presentButEmpty_eAuthShape() {
            var x = f();
            x.authority = new byte[0];
            assertThat(structural(x.encode())).isEqualTo("E-AUTH-SHAPE");
        }

        @Test
        void authority_scopeNot32Bytes_eAuthShape() {
            for (int n : new int[] {0, 31, 33}) {
                var x = f();
                x.authority = authority(filled(n, 7), GENERATION, filled(32, 1));
                assertThat(structural(x.encode())).as("scope " + n).isEqualTo("E-AUTH-SHAPE");
            }
        }

        @Test
        void authority_generationZero_eAuthShape() {
            var x = f();
            x.authority = authority(SCOPE, 0, filled(32, 1));
            assertThat(structural(x.encode())).isEqualTo("E-AUTH-SHAPE");
        }

        @Test
        void authority_generationTwoTo64Minus1_wellShaped() {
            var x = f();
            x.authority = authority(SCOPE, -1L, filled(32, 1));
            assertThat(structural(x.encode())).isEqualTo("OK");
        }

        @Test
        void authority_macNot32Bytes_eAuthShape() {
            for (int n : new int[] {0, 31, 33}) {
                var x = f();
                x.authority = authority(SCOPE, GENERATION, filled(n, 1));
                assertThat(structural(x.encode())).as("mac " + n).isEqualTo("E-AUTH-SHAPE");
            }
        }
    }

    @Nested
    class Encoding {
        private byte[] valid() {
            return f().signed().encode();
        }

        private String parse(byte[] b) {
            try {
                Envelope.parse(b);
                return "OK";
            } catch (EnvelopeRejectedException e) {
                return e.rule().id();
            }
        }

        @Test
        void unknownField100Appended_eEncoding() {
            byte[] extra = proto(out -> out.writeUInt64(100, 1));
            assertThat(parse(concat(valid(), extra))).isEqualTo("E-ENCODING");
            byte[] extraBytes = proto(out -> out.writeByteArray(100, new byte[] {1, 2}));
            assertThat(parse(concat(valid(), extraBytes))).isEqualTo("E-ENCODING");
        }

        @Test
        void unknownFieldInsideAuthority_eEncoding() throws Exception {
            SnapshotEnvelope.Builder b = EnvelopeFixtures.builderOf(EnvelopeFixtures.sealedV01());
            SnapshotAuthority a = b.getAuthority().toBuilder()
                    .setUnknownFields(UnknownFieldSet.newBuilder()
                            .addField(100, UnknownFieldSet.Field.newBuilder().addVarint(1).build()).build())
                    .build();
            byte[] bytes = b.setAuthority(a).build().toByteArray();
            assertThat(parse(bytes)).isEqualTo("E-ENCODING");
            // the same through the hand encoder: authority bytes with field 100 appended
            var x = f().signed();
            x.authority = concat(x.authority, proto(out -> out.writeUInt64(100, 1)));
            assertThat(parse(x.encode())).isEqualTo("E-ENCODING");
        }

        @Test
        void unknownFieldsBetweenKnownFields_eEncoding() {
            var x = f().signed();
            byte[] head = proto(out -> out.writeByteArray(1, x.format));
            byte[] full = x.encode();
            byte[] mixed = concat(head, proto(out -> out.writeUInt64(8, 5)), Arrays.copyOfRange(full, head.length, full.length));
            assertThat(parse(mixed)).isEqualTo("E-ENCODING");
        }

        @Test
        void nonMinimalVarint_lastSequence_eEncoding() {
            var x = f().signed();
            byte[] full = x.encode();
            // 0x18 0x07 -> 0x18 0x87 0x00 (same value 7, two bytes)
            int at = indexOf(full, new byte[] {0x18, 0x07});
            byte[] nonMinimal = concat(Arrays.copyOfRange(full, 0, at), new byte[] {0x18, (byte) 0x87, 0x00},
                    Arrays.copyOfRange(full, at + 2, full.length));
            assertThat(parse(nonMinimal)).isEqualTo("E-ENCODING");
        }

        @Test
        void nonMinimalLengthPrefix_eEncoding() {
            byte[] full = valid();
            // format: 0x0A 0x1D (29) -> 0x0A 0x9D 0x00
            assertThat(full[0]).isEqualTo((byte) 0x0A);
            assertThat(full[1]).isEqualTo((byte) 29);
            byte[] nonMinimal = concat(new byte[] {0x0A, (byte) 0x9D, 0x00}, Arrays.copyOfRange(full, 2, full.length));
            assertThat(parse(nonMinimal)).isEqualTo("E-ENCODING");
        }

        @Test
        void nonMinimalTag_eEncoding() {
            byte[] full = valid();
            byte[] nonMinimal = concat(new byte[] {(byte) 0x8A, 0x00}, Arrays.copyOfRange(full, 1, full.length));
            assertThat(parse(nonMinimal)).isEqualTo("E-ENCODING");
        }

        @Test
        void invalidUtf8InRunId_eEncoding() {
            var x = f().signed();
            x.runId = new byte[] {'r', 'u', 'n', '-', (byte) 0xFF};
            assertThat(parse(x.encode())).isEqualTo("E-ENCODING");
            x.runId = new byte[] {'r', (byte) 0xED, (byte) 0xA0, (byte) 0x80}; // encoded surrogate
            assertThat(parse(x.encode())).isEqualTo("E-ENCODING");
            x.runId = new byte[] {'r', (byte) 0xC0, (byte) 0x80}; // overlong NUL
            assertThat(parse(x.encode())).isEqualTo("E-ENCODING");
        }

        @Test
        void invalidUtf8InFormat_eEncoding() {
            var x = f().signed();
            x.format = Arrays.copyOf(x.format, x.format.length + 1);
            x.format[x.format.length - 1] = (byte) 0x80;
            assertThat(parse(x.encode())).isEqualTo("E-ENCODING");
        }

        @Test
        void fieldsOutOfOrder_eEncoding() {
            var x = f().signed();
            byte[] reordered = proto(out -> {
                out.writeByteArray(2, x.runId);
                out.writeByteArray(1, x.format);
                out.writeUInt64(3, x.lastSequence);
                out.writeUInt64(4, x.lifecycle);
                out.writeByteArray(5, x.payload);
                out.writeByteArray(6, x.sha256);
                out.writeByteArray(7, x.authority);
            });
            assertThat(parse(reordered)).isEqualTo("E-ENCODING");
        }

        @Test
        void fieldRepeated_eEncoding() {
            var x = f().signed();
            assertThat(parse(concat(x.encode(), proto(out -> out.writeUInt64(3, 7))))).isEqualTo("E-ENCODING");
            assertThat(parse(concat(x.encode(), proto(out -> out.writeByteArray(7, x.authority))))).isEqualTo("E-ENCODING");
        }

        @Test
        void explicitZeroScalar_eEncodingNotLifecycle() {
            var y = f().signed();
            byte[] zeroLifecycle = proto(out -> {
                out.writeByteArray(1, y.format);
                out.writeByteArray(2, y.runId);
                out.writeUInt64(3, y.lastSequence);
                out.writeUInt64(4, 0);
                out.writeByteArray(5, y.payload);
                out.writeByteArray(6, y.sha256);
                out.writeByteArray(7, y.authority);
            });
            assertThat(parse(zeroLifecycle)).isEqualTo("E-ENCODING");
            byte[] zeroGen = proto(out -> {
                out.writeByteArray(1, y.format);
                out.writeByteArray(2, y.runId);
                out.writeUInt64(3, y.lastSequence);
                out.writeUInt64(4, y.lifecycle);
                out.writeByteArray(5, y.payload);
                out.writeByteArray(6, y.sha256);
                out.writeByteArray(7, concat(y.authority, proto(o -> o.writeUInt64(2, 0))));
            });
            assertThat(parse(zeroGen)).isEqualTo("E-ENCODING");
            byte[] emptyRunId = proto(out -> {
                out.writeByteArray(1, y.format);
                out.writeByteArray(2, new byte[0]);
                out.writeUInt64(3, y.lastSequence);
            });
            assertThat(parse(emptyRunId)).isEqualTo("E-ENCODING");
        }

        @Test
        void lifecycleVarintAbove32Bits_truncatesToSuspended_eEncoding() {
            var x = f().signed();
            x.lifecycle = 0x1_0000_0001L;
            assertThat(parse(x.encode())).isEqualTo("E-ENCODING");
        }

        @Test
        void wrongWireType_eEncoding() {
            var x = f().signed();
            byte[] full = x.encode();
            int at = indexOf(full, new byte[] {0x18, 0x07});
            byte[] asBytes = concat(Arrays.copyOfRange(full, 0, at), new byte[] {0x1A, 0x01, 0x07},
                    Arrays.copyOfRange(full, at + 2, full.length));
            assertThat(parse(asBytes)).isEqualTo("E-ENCODING");
        }

        @Test
        void truncatedOrTrailingByte_eEncoding() {
            byte[] full = valid();
            assertThat(parse(Arrays.copyOf(full, full.length - 1))).isEqualTo("E-ENCODING");
            assertThat(parse(concat(full, new byte[] {0}))).isEqualTo("E-ENCODING");
        }

        @Test
        void emptyOrOversized_eSizeBeforeParsing() {
            assertThat(parse(new byte[0])).isEqualTo("E-SIZE");
            byte[] big = new byte[Envelope.MAX_ENCODED_BYTES + 1];
            Assertions.assertTimeoutPreemptively(Duration.ofMillis(500), () -> assertThat(parse(big)).isEqualTo("E-SIZE"));
        }

        @Test
        void parse_callerReusesArray_envelopeUnaffected() throws Exception {
            byte[] b = valid();
            Envelope e = Envelope.parse(b);
            Arrays.fill(b, (byte) 0);
            assertThat(e.toBinary()).isEqualTo(valid());
        }

        private int indexOf(byte[] hay, byte[] needle) {
            for (int i = 0; i + needle.length <= hay.length; i++) {
                if (Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) {
                    return i;
                }
            }
            throw new IllegalArgumentException("not found");
        }
    }

    @Nested
    class Agreement {
        @Test
        void lifecycleDiffersFromPayloadStatus_signedClaim_eAgreement() throws Exception {
            var x = f();
            x.lifecycle = 2; // COMPLETED; the payload says suspended
            byte[] env = x.signed().encode();
            assertThat(structural(env)).isEqualTo("OK");
            assertThat(strict(env)).isEqualTo("E-AGREEMENT");
            // the claim itself is authentic: only the agreement rule stands between it and a resume
            try (AuthorityKey key = EnvelopeFixtures.key()) {
                Envelopes.Validated v = Envelopes.validate(Envelope.parse(env));
                assertThatCode(() -> Envelopes.verify(v, key::verify)).doesNotThrowAnyException();
            }
        }

        @Test
        void lastSequenceDiffersFromPayload_signedClaim_eAgreement() throws Exception {
            var x = f();
            x.lastSequence = 8;
            assertThat(strict(x.signed().encode())).isEqualTo("E-AGREEMENT");
            x.lastSequence = 6;
            assertThat(strict(x.signed().encode())).isEqualTo("E-AGREEMENT");
        }

        @Test
        void protobufBuilt_lifecycleAndSequenceDiffer_eAgreement() throws Exception {
            SnapshotEnvelope.Builder b = EnvelopeFixtures.builderOf(EnvelopeFixtures.sealedV01());
            b.setLifecycleValue(4);
            assertThat(strict(b.build().toByteArray())).isEqualTo("E-AGREEMENT");
            b = EnvelopeFixtures.builderOf(EnvelopeFixtures.sealedV01());
            b.setLastSequence(-2L);
            assertThat(strict(b.build().toByteArray())).isEqualTo("E-AGREEMENT");
        }

        @Test
        void everyLifecycleOtherThanPayloadStatus_eAgreement() {
            String[] statuses = {"suspended", "completed", "failed", "cancelled"};
            for (int s = 0; s < 4; s++) {
                String json = V01.replace("\"suspended\"", "\"" + statuses[s] + "\"");
                for (int lc = 1; lc <= 4; lc++) {
                    var x = f().payload(json);
                    x.lifecycle = lc;
                    String want = lc == s + 1 ? "OK" : "E-AGREEMENT";
                    assertThat(strict(x.signed().encode())).as(statuses[s] + " vs " + lc).isEqualTo(want);
                }
            }
        }
    }

    @Nested
    class SealAndVerify {
        @Test
        void seal_nullSigner_signingException() {
            assertThatThrownBy(() -> Envelopes.seal(EnvelopeFixtures.snapshot(V01), null)).isInstanceOf(SigningException.class);
        }

        @Test
        void seal_signerThrowsOrReturnsNull_opaqueSigningException() {
            Snapshot s = EnvelopeFixtures.snapshot(V01);
            assertThatThrownBy(() -> Envelopes.seal(s, in -> {
                throw new IllegalStateException("secret detail");
            })).isInstanceOf(SigningException.class).hasMessage(SigningException.MESSAGE).hasNoCause();
            assertThatThrownBy(() -> Envelopes.seal(s, in -> null)).isInstanceOf(SigningException.class);
            assertThatThrownBy(() -> Envelopes.seal(s, in -> {
                throw new AssertionError("x");
            })).isInstanceOf(SigningException.class);
        }

        @Test
        void unsigned_sealWithTheClaimOfItsInput_isTheEnvelopeSealGives_noClaimIsRefused() throws Exception {
            Snapshot s = EnvelopeFixtures.snapshot(V01);
            try (AuthorityKey key = EnvelopeFixtures.key()) {
                Envelopes.Unsigned unsigned = Envelopes.unsigned(s);
                assertThat(unsigned.claimInput().runId()).isEqualTo("run-1");
                assertThat(unsigned.claimInput().sha256()).isEqualTo(EnvelopeFixtures.sha256(s.canonicalBytes()));
                Envelope twoHalves = unsigned.seal(key.sign(unsigned.claimInput()));
                assertThat(twoHalves.toBinary()).isEqualTo(Envelopes.seal(s, key::sign).toBinary());
                assertThat(strict(twoHalves.toBinary())).isEqualTo("OK");
                assertThatThrownBy(() -> unsigned.seal(null)).isInstanceOf(SigningException.class).hasNoCause();
            }
        }

        @Test
        void seal_signerSeesTheSnapshotsOwnFields() throws Exception {
            Snapshot s = EnvelopeFixtures.snapshot(V01.replace("\"last_sequence\":7", "\"last_sequence\":18446744073709551614")
                    .replace("\"suspended\"", "\"cancelled\""));
            try (AuthorityKey key = EnvelopeFixtures.key()) {
                Envelope e = Envelopes.seal(s, in -> {
                    assertThat(in.runId()).isEqualTo("run-1");
                    assertThat(in.lastSequence()).isEqualTo(-2L);
                    assertThat(in.lifecycle()).isEqualTo(4);
                    assertThat(in.sha256()).isEqualTo(EnvelopeFixtures.sha256(s.canonicalBytes()));
                    return key.sign(in);
                });
                assertThat(strict(e.toBinary())).isEqualTo("OK");
            }
        }

        @Test
        void verify_otherKeyScopeOrGeneration_singleVerificationException() throws Exception {
            Envelopes.Validated v = Envelopes.validate(EnvelopeFixtures.sealedV01());
            byte[] k = new byte[32];
            try (var sk = spice.authority.snapshot.crypto.SecretKeyBytes.copyOf(k, spice.authority.snapshot.crypto.SecretAccess.grant());
                 AuthorityKey otherKey = new AuthorityKey(SCOPE, GENERATION, sk);
                 AuthorityKey otherScope = new AuthorityKey(filled(32, 1), GENERATION, sk);
                 AuthorityKey otherGen = new AuthorityKey(SCOPE, GENERATION + 1, sk)) {
                for (AuthorityKey wrong : new AuthorityKey[] {otherKey, otherScope, otherGen}) {
                    assertThatThrownBy(() -> Envelopes.verify(v, wrong::verify)).isSameAs(VerificationException.failed());
                }
            }
            assertThatThrownBy(() -> Envelopes.verify(v, null)).isSameAs(VerificationException.failed());
            assertThatThrownBy(() -> Envelopes.verify(v, (in, c) -> {
                throw new IllegalStateException();
            })).isSameAs(VerificationException.failed());
            // a.4 step 7: a verifier's Error is its failure too; only the VM's own passes through.
            assertThatThrownBy(() -> Envelopes.verify(v, (in, c) -> {
                throw new AssertionError("verifier broke");
            })).isSameAs(VerificationException.failed());
            assertThatThrownBy(() -> Envelopes.verify(v, (in, c) -> {
                throw new LinkageError("verifier broke");
            })).isSameAs(VerificationException.failed());
            assertThatThrownBy(() -> Envelopes.verify(v, (in, c) -> {
                throw new OutOfMemoryError("vm");
            })).isInstanceOf(OutOfMemoryError.class);
        }

        /** Before validation a run_id may be anything: its toString stays one bounded line. */
        @Test
        void toString_unvalidatedRunId_escapedAndBounded() throws Exception {
            SnapshotEnvelope.Builder b = EnvelopeFixtures.builderOf(EnvelopeFixtures.sealedV01());
            b.setRunId("run\nFORGED log line\u2028" + "x".repeat(10_000));
            Envelope e = Envelope.parse(b.build().toByteArray());

            String shown = e.toString();

            assertThat(shown).doesNotContain("\n").doesNotContain("\u2028").contains("run\\u000AFORGED log line\\u2028")
                    .contains("...(10020 chars)").hasSizeLessThan(400);
        }

        @Test
        void verify_claimFromAnotherEnvelope_fails() throws Exception {
            Envelope a = EnvelopeFixtures.sealedV01();
            Envelope b = EnvelopeFixtures.sealed(V01.replace("\"last_sequence\":7", "\"last_sequence\":9"));
            SnapshotEnvelope.Builder spliced = EnvelopeFixtures.builderOf(b);
            spliced.setAuthority(EnvelopeFixtures.builderOf(a).getAuthority());
            Envelopes.Strict s = Envelopes.validateStrict(Envelope.parse(spliced.build().toByteArray()));
            try (AuthorityKey key = EnvelopeFixtures.key()) {
                assertThatThrownBy(() -> Envelopes.verify(s.validated(), key::verify)).isInstanceOf(VerificationException.class);
            }
        }
    }

    @Test
    void jsonMapping_unknownMember_rejected() {
        String json = EnvelopeFixtures.sealedV01().toJson();
        assertThatThrownBy(() -> Envelope.parseJson(json.replaceFirst("\\{", "{\"extra\":1,"))).isInstanceOf(EnvelopeRejectedException.class);
        assertThatCode(() -> Envelope.parseJson(json)).doesNotThrowAnyException();
    }

    @Test
    void builderOf_protoWithByteStringScope_matchesAuthorityHelper() {
        SnapshotAuthority a = EnvelopeFixtures.authorityOf(SCOPE, GENERATION, filled(32, 2));
        assertThat(a.toByteArray()).isEqualTo(authority(SCOPE, GENERATION, filled(32, 2)));
        assertThat(a.getScopeId()).isEqualTo(ByteString.copyFrom(SCOPE));
    }
}
