package spice.authority.snapshot.envelope;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.concat;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.proto;
import static spice.authority.snapshot.envelope.EnvelopeFixtures.structural;

import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.payload.PayloadFixtures;
import spice.authority.snapshot.payload.PayloadRule;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Envelopes per format (wire-format-v1alpha3.md sections 1, 6, 8): v1alpha3 seals and verifies with
 * its own format string, is held to 16 MiB + 295 encoded bytes, refuses unknown fields; an
 * unknown format is E-FORMAT naming it; the payload must be of the envelope's format.
 */
class EnvelopeV1alpha3Test {
    private static final String V3 = SnapshotFormat.V1ALPHA3.wire();
    private static final int MIB16 = 16 << 20;

    private static EnvelopeFixtures.Fields v3Fields() {
        EnvelopeFixtures.Fields f = new EnvelopeFixtures.Fields();
        f.format = V3.getBytes(UTF_8);
        return f.payload(PayloadFixtures.V3_01);
    }

    @Test
    void seal_v1alpha3Snapshot_carriesItsFormat_andVerifies() throws Exception {
        Snapshot s = EnvelopeFixtures.snapshot(PayloadFixtures.V3_01);
        try (AuthorityKey key = EnvelopeFixtures.key()) {
            Envelope e = Envelopes.seal(s, key::sign);
            assertThat(e.format()).isEqualTo(V3);
            Envelopes.Strict strict = Envelopes.validateStrict(Envelope.parse(e.toBinary()));
            assertThat(strict.snapshot().format()).isEqualTo(SnapshotFormat.V1ALPHA3);
            assertThat(strict.validated().claimInput().format()).isEqualTo(V3);
            Envelopes.verify(strict.validated(), key::verify);
            assertThat(Envelopes.unsigned(s).claimInput().snapshotFormat()).isEqualTo(SnapshotFormat.V1ALPHA3);
        }
    }

    @Test
    void unknownFormat_isEFormatNamingIt() throws Exception {
        EnvelopeFixtures.Fields f = v3Fields().dummyAuthority();
        f.format = "spice.agent.snapshot/v1alpha1".getBytes(UTF_8);
        assertThatThrownBy(() -> Envelopes.validate(Envelope.parse(f.encode())))
                .isInstanceOfSatisfying(EnvelopeRejectedException.class, e -> {
                    assertThat(e.rule()).isEqualTo(EnvelopeRule.E_FORMAT);
                    assertThat(e.getMessage()).isEqualTo("E-FORMAT: snapshot format \"spice.agent.snapshot/v1alpha1\" is unknown");
                });
        f.format = ("x\n" + "y".repeat(300)).getBytes(UTF_8);
        assertThatThrownBy(() -> Envelopes.validate(Envelope.parse(f.encode())))
                .hasMessageContaining("\\u000A").hasMessageNotContaining("\n").hasMessageContaining("chars)");
    }

    @Test
    void acceptedSet_knownButRefusedFormat_isEFormat() throws Exception {
        Envelope e = Envelope.parse(v3Fields().dummyAuthority().encode());
        assertThat(Envelopes.validate(e, Set.of(SnapshotFormat.V1ALPHA3)).claimInput().snapshotFormat()).isEqualTo(SnapshotFormat.V1ALPHA3);
        assertThatThrownBy(() -> Envelopes.validate(e, Set.of(SnapshotFormat.V1ALPHA2)))
                .isInstanceOfSatisfying(EnvelopeRejectedException.class, x -> assertThat(x.rule()).isEqualTo(EnvelopeRule.E_FORMAT));
        assertThatThrownBy(() -> Envelopes.validateStrict(e, Set.of(SnapshotFormat.V1ALPHA2)))
                .isInstanceOfSatisfying(EnvelopeRejectedException.class, x -> assertThat(x.rule()).isEqualTo(EnvelopeRule.E_FORMAT));
    }

    @Test
    void payloadOfTheOtherFormat_isEPayloadVersion_bothWays() throws Exception {
        EnvelopeFixtures.Fields v3WithV2Payload = v3Fields().payload(PayloadFixtures.V01).signed();
        EnvelopeFixtures.Fields v2WithV3Payload = new EnvelopeFixtures.Fields().payload(PayloadFixtures.V3_01).signed();
        for (byte[] bytes : new byte[][] {v3WithV2Payload.encode(), v2WithV3Payload.encode()}) {
            Envelope e = Envelope.parse(bytes);
            Envelopes.validate(e); // the structural layer reads only run_id (section 8)
            assertThatThrownBy(() -> Envelopes.validateStrict(e)).isInstanceOfSatisfying(EnvelopeRejectedException.class, x -> {
                assertThat(x.rule()).isEqualTo(EnvelopeRule.E_PAYLOAD);
                assertThat(x.payloadRule()).isEqualTo(PayloadRule.P_VERSION);
            });
        }
    }

    @Test
    void unknownEnvelopeLevelField_refused() {
        byte[] unknown = proto(out -> out.writeUInt64(8, 1));
        assertThat(structural(concat(v3Fields().dummyAuthority().encode(), unknown))).isEqualTo("E-ENCODING");
        assertThat(structural(v3Fields().dummyAuthority().encode())).isEqualTo("OK");
    }

    /** A 16 MiB payload whose lenient run_id is {@code runId}, padded with a string member. */
    private static byte[] payloadOfExactly(int size, String runId) {
        String head = "{\"run_id\":\"" + runId + "\",\"pad\":\"";
        byte[] p = new byte[size];
        Arrays.fill(p, (byte) 'a');
        byte[] h = head.getBytes(UTF_8);
        System.arraycopy(h, 0, p, 0, h.length);
        p[size - 2] = '"';
        p[size - 1] = '}';
        return p;
    }

    @Test
    void sizeCap_largestPossibleV1alpha3Envelope_isExactly16MiBPlus295_andAccepted() throws Exception {
        String runId = "r".repeat(128);
        EnvelopeFixtures.Fields f = v3Fields().runId(runId).payload(payloadOfExactly(MIB16, runId));
        f.lastSequence = -2L; // 2^64-2
        f.authority = EnvelopeFixtures.authority(EnvelopeFixtures.SCOPE, Long.MIN_VALUE /* 2^63 */, EnvelopeFixtures.filled(32, 1));
        byte[] bytes = f.encode();
        assertThat(bytes).hasSize(16_777_511).hasSize(SnapshotFormat.V1ALPHA3.maxEnvelopeBytes());
        assertThat(structural(bytes)).isEqualTo("OK");
    }

    @Test
    void sizeCap_overIt_isESizeForV1alpha3_beforeTheRunIdRule_v1alpha2Unchanged() throws Exception {
        String runId = "r".repeat(400); // over token(128): the size cap is checked first
        EnvelopeFixtures.Fields f = v3Fields().runId(runId).payload(payloadOfExactly(MIB16, runId)).dummyAuthority();
        byte[] bytes = f.encode();
        assertThat(bytes.length).isGreaterThan(16_777_511).isLessThanOrEqualTo(Envelope.MAX_ENCODED_BYTES);
        assertThatThrownBy(() -> Envelopes.validate(Envelope.parse(bytes))).isInstanceOfSatisfying(EnvelopeRejectedException.class, e -> {
            assertThat(e.rule()).isEqualTo(EnvelopeRule.E_SIZE);
            assertThat(e.getMessage()).isEqualTo("E-SIZE: spice.agent.snapshot/v1alpha3 envelope exceeds 16777511 encoded bytes");
        });
        f.format = SnapshotFormat.V1ALPHA2.wire().getBytes(UTF_8);
        assertThat(structural(f.encode())).isEqualTo("E-RUNID");
    }
}
