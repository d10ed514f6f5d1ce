package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;

/** {@link ActiveRun#seal} says what happened: the envelope, and whether the lease ended with it. */
class SealResultTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String RUN = "run-sealed";

    @Test
    void seal_suspended_keepsTheLease_identicalRepeatGivesTheSameEnvelope() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun run = a.start(new RunId(RUN), NONE);

        ActiveRun.Sealed first = run.seal(Fixtures.suspended(RUN, 7), NONE);
        ActiveRun.Sealed again = run.seal(Fixtures.suspended(RUN, 7), NONE);

        assertThat(first.leaseEnded()).isFalse();
        assertThat(again.leaseEnded()).isFalse();
        assertThat(again.envelope().toBinary()).isEqualTo(first.envelope().toBinary());
        assertThat(first.envelope().runId()).isEqualTo(RUN);
        assertThat(run.isClosed()).isFalse();
        assertThat(dir.isLocked(RecordCodec.fileStem(RUN) + ".lock")).isTrue();
        run.close();
    }

    @Test
    void seal_terminal_endsTheLease_andReleasesTheLock() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun run = a.start(new RunId(RUN), NONE);

        ActiveRun.Sealed done = run.seal(Fixtures.snapshot(RUN, "completed", 9), NONE);

        assertThat(done.leaseEnded()).isTrue();
        Envelope env = done.envelope();
        assertThat(env.lastSequence()).isEqualTo(9);
        assertThat(run.isClosed()).isTrue();
        assertThat(dir.isLocked(RecordCodec.fileStem(RUN) + ".lock")).isFalse();
        assertThat(a.inspect(new RunId(RUN))).map(r -> r.phase().name()).contains("COMPLETED");
    }
}
