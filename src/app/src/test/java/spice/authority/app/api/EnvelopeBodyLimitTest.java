package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.envelope.Envelope;

/** The import and inspect routes admit the largest envelope of every format, binary or JSON mapping. */
class EnvelopeBodyLimitTest {
    @Test
    void envelopeRoutes_admitTheLargestEnvelopeOfEveryFormat() {
        for (SnapshotFormat f : SnapshotFormat.values()) {
            assertThat(TransportGuard.LARGEST_ENVELOPE).as(f.wire()).isGreaterThanOrEqualTo(f.maxEnvelopeBytes());
            // The JSON mapping: the base64 of the envelope's largest field (its payload) and the rest.
            long base64 = 4L * ((f.maxEnvelopeBytes() + 2) / 3);
            assertThat(TransportGuard.LARGEST_BODY).as(f.wire()).isGreaterThan(base64 + 4096);
        }
        assertThat(SnapshotFormat.V1ALPHA3.maxEnvelopeBytes()).isEqualTo(16_777_511);
        // Never more than the parser takes: a body it would refuse unread is refused as it arrives.
        assertThat(TransportGuard.LARGEST_ENVELOPE).isEqualTo(Envelope.MAX_ENCODED_BYTES);
    }
}
