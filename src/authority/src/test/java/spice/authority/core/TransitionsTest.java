package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;

/**
 * {@link Transitions} over hand-wired parts: the order of its steps (fence and lease before any
 * file), what a failed write leaves (nothing written: retryable, unfenced; otherwise fenced and
 * uncertain), and that every path not handing a lease over releases it.
 */
class TransitionsTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final RunId RUN = new RunId("run-1");

    @Test
    void start_writesActiveAtOne_andHandsTheLeaseToTheRun() throws Exception {
        try (Parts p = new Parts()) {
            ActiveRun run = p.transitions.start(RUN, NONE);
            assertThat(p.leases.outstanding()).isEqualTo(1);
            assertThat(p.store.readRecord(RUN)).map(r -> r.phase() + "@" + r.runGeneration()).contains("ACTIVE@1");
            assertThatThrownBy(() -> p.transitions.start(RUN, NONE)).isInstanceOf(AuthorityException.Busy.class);
            run.close();
            assertThat(p.leases.outstanding()).isZero();
            assertThatThrownBy(() -> p.transitions.start(RUN, NONE)).isInstanceOf(AuthorityException.State.class)
                    .hasMessageContaining("phase ACTIVE");
            assertThat(p.leases.outstanding()).isZero();
        }
    }

    @Test
    void aFencedRun_isRefusedBeforeAnyLeaseOrFile() throws Exception {
        try (Parts p = new Parts()) {
            p.fences.fence(RUN, p.store.newRecord(RUN, 1, RunPhase.ACTIVE, null));
            int writes = p.dir.writeCount();
            assertThatThrownBy(() -> p.transitions.start(RUN, NONE)).isInstanceOf(AuthorityException.Uncertain.class);
            assertThatThrownBy(() -> p.transitions.abandon(RUN, NONE)).isInstanceOf(AuthorityException.Uncertain.class);
            assertThat(p.leases.outstanding()).isZero();
            assertThat(p.dir.writeCount()).isEqualTo(writes);
            assertThat(p.dir.snapshotFiles()).doesNotContainKey(RecordCodec.fileStem("run-1") + ".lock");
        }
    }

    @Test
    void writeTransition_nothingWritten_isUnavailableAndUnfenced_afterTheRename_fencedAndUncertain() throws Exception {
        try (Parts p = new Parts()) {
            RunRecord rec = p.store.newRecord(RUN, 1, RunPhase.ACTIVE, null);
            p.dir.failAt(MemoryDirectory.Step.AFTER_FSYNC_BEFORE_RENAME, 0, false);
            assertThatThrownBy(() -> p.transitions.writeTransition(RUN, rec, NONE, "start"))
                    .isInstanceOf(AuthorityException.Unavailable.class).hasMessageStartingWith("start run-1: nothing written: ");
            assertThat(p.fences.isFenced(RUN)).isFalse();
            assertThat(p.store.readRecord(RUN)).isEmpty();

            p.dir.failAt(MemoryDirectory.Step.AFTER_RENAME_BEFORE_DIR_FSYNC, 0, true);
            assertThatThrownBy(() -> p.transitions.writeTransition(RUN, rec, NONE, "start"))
                    .isInstanceOf(AuthorityException.Uncertain.class)
                    .hasMessageStartingWith("start run-1: the record write failed after it started");
            assertThat(p.fences.attempted(RUN)).contains(rec);
        }
    }

    @Test
    void abandon_noRecord_isStateAndCreatesNoLockFile() throws Exception {
        try (Parts p = new Parts()) {
            assertThatThrownBy(() -> p.transitions.abandon(RUN, NONE)).isInstanceOf(AuthorityException.State.class)
                    .hasMessage("run run-1 has no record");
            assertThat(p.dir.snapshotFiles()).doesNotContainKey(RecordCodec.fileStem("run-1") + ".lock");
            assertThat(p.leases.outstanding()).isZero();

            p.transitions.start(RUN, NONE).close();
            RunRecord cancelled = p.transitions.abandon(RUN, NONE);
            assertThat(cancelled.phase()).isEqualTo(RunPhase.CANCELLED);
            assertThat(p.store.readRecord(RUN)).contains(cancelled);
            assertThat(p.leases.outstanding()).isZero();
        }
    }

    @Test
    void signWithSubkey_isDeterministicPerGeneration() {
        try (Parts p = new Parts()) {
            var input = new spice.authority.snapshot.crypto.ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2,
                    "run-1", 7, 1, new byte[32]);
            assertThat(p.transitions.signWithSubkey(RUN, 1, input).hmac())
                    .isEqualTo(p.transitions.signWithSubkey(RUN, 1, input).hmac())
                    .isNotEqualTo(p.transitions.signWithSubkey(RUN, 2, input).hmac());
        }
    }
}
