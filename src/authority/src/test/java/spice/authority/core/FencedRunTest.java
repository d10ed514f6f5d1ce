package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.envelope.Envelope;

/**
 * What a run view of a fenced run rests on: {@link RunAuthority#isFenced} is true from the
 * uncertain write on, although the run's lease still holds its lock (so a view by the lease alone
 * would call it owned); the record stays readable; nobody can act on the run; and only a restart
 * (a new authority over the same directory) clears the fence, reading the truth from disk.
 */
class FencedRunTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String RUN = "run-fenced";

    @Test
    void uncertainWrite_fencesTheRun_leaseStillHoldsTheLock_recordReadable_nobodyActs_untilARestart() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun other = a.start(new RunId("run-other"), NONE);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        assertThat(a.isFenced(new RunId(RUN))).isFalse();
        // The suspend's rename is called and fails: whether it took effect is unknown here.
        dir.failAt(MemoryDirectory.Step.RENAME_FAILS, 0, false);
        assertThatThrownBy(() -> owner.seal(Fixtures.suspended(RUN, 7), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        dir.clearFault();

        assertThat(a.isFenced(new RunId(RUN))).isTrue();
        assertThat(a.isFenced(new RunId("run-other"))).isFalse();
        assertThat(owner.isClosed()).as("the lease is not ended").isFalse();
        assertThat(dir.isLocked(RecordCodec.fileStem(RUN) + ".lock")).as("and still holds the lock").isTrue();
        assertThat(a.inspect(new RunId(RUN))).as("the record is still readable for a view").map(r -> r.phase() + "@" + r.runGeneration())
                .contains("ACTIVE@1");
        assertThatThrownBy(() -> owner.seal(Fixtures.suspended(RUN, 7), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(() -> a.abandon(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(() -> a.reissue(Fixtures.suspended(RUN, 7))).isInstanceOf(AuthorityException.Uncertain.class);
        other.close();

        // A restart: a new authority over what the directory holds. No fence survives; the
        // record on disk is the truth (the suspend never landed), and the run is an orphan.
        RunAuthority restarted = Fixtures.open(dir.afterCrash());
        assertThat(restarted.isFenced(new RunId(RUN))).isFalse();
        assertThat(restarted.inspect(new RunId(RUN))).map(r -> r.phase() + "@" + r.runGeneration()).contains("ACTIVE@1");
        assertThat(restarted.abandon(new RunId(RUN), NONE).phase()).isEqualTo(RunPhase.CANCELLED);
        restarted.close();
    }

    @Test
    void uncertainSuspendThatLanded_restartFindsItSuspended_andItsEnvelopeIsIssuedAgain() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        // Fails after the rename, durably: the SUSPENDED record is on disk, the answer was lost.
        dir.failAt(MemoryDirectory.Step.AFTER_RENAME_BEFORE_DIR_FSYNC, 0, true);
        assertThatThrownBy(() -> owner.seal(Fixtures.suspended(RUN, 7), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThat(a.isFenced(new RunId(RUN))).isTrue();

        RunAuthority restarted = Fixtures.open(dir.afterCrash());
        assertThat(restarted.isFenced(new RunId(RUN))).isFalse();
        assertThat(restarted.inspect(new RunId(RUN))).map(RunRecord::phase).contains(RunPhase.SUSPENDED);
        Envelope again = restarted.reissue(Fixtures.suspended(RUN, 7));
        try (RunImport imp = restarted.prepareImport(again, NONE)) {
            assertThat(imp.sourceGeneration()).isEqualTo(1);
        }
        restarted.close();
    }

    @Test
    void uncertainStart_renameFailedBeforeAnyRecord_fencedWriteIsTheStartsRecord_listingHasNoRecord_untilARestart() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        assertThat(a.fencedWrite(new RunId(RUN))).isEmpty();
        // The start's rename is called and fails: no record of the run exists, and nobody knows that.
        dir.failAt(MemoryDirectory.Step.RENAME_FAILS, 0, false);
        assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        dir.clearFault();

        assertThat(a.isFenced(new RunId(RUN))).isTrue();
        assertThat(a.inspect(new RunId(RUN))).as("no record to read").isEmpty();
        assertThat(a.listRecords().records()).isEmpty();
        assertThat(a.fencedWrite(new RunId(RUN))).as("what the start tried to write").map(r -> r.phase() + "@" + r.runGeneration())
                .contains("ACTIVE@1");
        assertThat(a.fencedWrites()).containsOnlyKeys(new RunId(RUN));
        assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Uncertain.class);

        RunAuthority restarted = Fixtures.open(dir.afterCrash());
        assertThat(restarted.isFenced(new RunId(RUN))).isFalse();
        assertThat(restarted.fencedWrite(new RunId(RUN))).isEmpty();
        assertThat(restarted.fencedWrites()).isEmpty();
        assertThat(restarted.inspect(new RunId(RUN))).as("the start never landed").isEmpty();
        restarted.close();
    }
}
