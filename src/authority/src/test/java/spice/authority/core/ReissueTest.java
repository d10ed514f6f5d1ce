package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * {@link RunAuthority#reissue}: the identical SUSPENDED snapshot gives the byte-identical envelope
 * again, to a caller that does not own the run, without writing, locking or taking anything; every
 * other snapshot or state is refused, also without writing.
 */
class ReissueTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String RUN = "run-reissue";
    private static final Snapshot S7 = Fixtures.suspended(RUN, 7);
    private static final Snapshot S8 = Fixtures.suspended(RUN, 8);

    private static String lockName() {
        return RecordCodec.fileStem(RUN) + ".lock";
    }

    private static String stateName() {
        return RecordCodec.fileStem(RUN) + ".state";
    }

    @Test
    void reissue_ownerAlive_identicalSnapshot_byteIdenticalEnvelope_nothingWrittenNothingTaken() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        Envelope first = owner.seal(S7, NONE).envelope();
        Map<String, byte[]> before = dir.snapshotFiles();
        int writes = dir.writeCount();

        Envelope again = a.reissue(S7);

        assertThat(again.toBinary()).isEqualTo(first.toBinary());
        assertThat(again.toJson()).isEqualTo(first.toJson());
        assertSameFiles(dir, before);
        assertThat(dir.writeCount()).as("record writes").isEqualTo(writes);
        assertThat(a.outstandingLeases()).as("only the owner's lease").isEqualTo(1);
        // The owner still owns the run: its lock is held by it alone, and it can go on.
        assertThat(dir.isLocked(lockName())).isTrue();
        assertThatThrownBy(() -> a.prepareImport(again, NONE)).isInstanceOf(AuthorityException.Busy.class);
        owner.resume(NONE);
        assertThat(a.inspect(new RunId(RUN))).map(r -> r.phase() + "@" + r.runGeneration()).contains("ACTIVE@2");
        owner.close();
        a.close();
    }

    @Test
    void reissue_ownerGone_envelopeImports_andTakesNoLockOfItsOwn() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        Envelope first = owner.seal(S7, NONE).envelope();
        owner.close(); // the owner died: SUSPENDED, lock free
        Map<String, byte[]> before = dir.snapshotFiles();

        Envelope again = a.reissue(S7);

        assertThat(again.toBinary()).isEqualTo(first.toBinary());
        assertSameFiles(dir, before);
        assertThat(dir.isLocked(lockName())).as("no lock left held").isFalse();
        assertThat(a.outstandingLeases()).isZero();
        try (RunImport imp = a.prepareImport(again, NONE)) {
            imp.consume(NONE);
            try (ActiveRun resumed = imp.activate(NONE)) {
                assertThat(resumed.runGeneration()).isEqualTo(2);
            }
        } catch (AuthorityException.Uncertain e) {
            throw new AssertionError("activated imports close cleanly", e);
        }
        assertThat(a.inspect(new RunId(RUN))).map(RunRecord::phase).contains(RunPhase.ACTIVE);
        a.close();
    }

    @Test
    void reissue_differentSnapshot_stateConflict_nothingWritten() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        owner.seal(S7, NONE);
        owner.close();
        Map<String, byte[]> before = dir.snapshotFiles();
        int writes = dir.writeCount();

        assertThatThrownBy(() -> a.reissue(S8)).isInstanceOf(AuthorityException.State.class)
                .hasMessage("run " + RUN + " is already suspended with a different snapshot");
        // Same last sequence, another payload (a different model): the digest decides.
        Snapshot sameSequence = Snapshot.decode(new String(S7.canonicalBytes(), java.nio.charset.StandardCharsets.UTF_8)
                .replace("\"model\":\"", "\"model\":\"x").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(sameSequence.lastSequence()).isEqualTo(S7.lastSequence());
        assertThatThrownBy(() -> a.reissue(sameSequence)).isInstanceOf(AuthorityException.State.class);

        assertSameFiles(dir, before);
        assertThat(dir.writeCount()).isEqualTo(writes);
        assertThat(a.outstandingLeases()).isZero();
        a.close();
    }

    @Test
    void reissue_runNotSuspended_orTerminalSnapshot_orNoRecord_stateConflict_nothingWritten() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        Map<String, byte[]> empty = dir.snapshotFiles();
        assertThatThrownBy(() -> a.reissue(S7)).isInstanceOf(AuthorityException.State.class).hasMessageContaining("has no record");
        assertSameFiles(dir, empty);

        ActiveRun owner = a.start(new RunId(RUN), NONE); // ACTIVE
        Map<String, byte[]> active = dir.snapshotFiles();
        assertThatThrownBy(() -> a.reissue(S7)).isInstanceOf(AuthorityException.State.class).hasMessageContaining("is ACTIVE");
        Snapshot done = Fixtures.snapshot(RUN, "completed", 7);
        assertThatThrownBy(() -> a.reissue(done)).isInstanceOf(AuthorityException.State.class)
                .hasMessageContaining("only a SUSPENDED snapshot");
        assertSameFiles(dir, active);

        owner.seal(S7, NONE);
        owner.resume(NONE); // ACTIVE at generation 2: the envelope of generation 1 is never issued again
        assertThatThrownBy(() -> a.reissue(S7)).isInstanceOf(AuthorityException.State.class);
        owner.seal(done, NONE); // COMPLETED
        assertThatThrownBy(() -> a.reissue(S7)).isInstanceOf(AuthorityException.State.class).hasMessageContaining("COMPLETED");
        assertThat(a.outstandingLeases()).isZero();
        a.close();
    }

    @Test
    void reissue_recordBindsAnHmacThisAuthorityDidNotCompute_verificationFailed_noEnvelope() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        owner.seal(S7, NONE);
        owner.close();
        // A record with a valid record MAC whose binding names the right payload but a claim HMAC
        // that the run subkey does not give (e.g. written for another generation).
        RunRecord real = a.inspect(new RunId(RUN)).orElseThrow();
        byte[] wrongMac = real.snapshot().authorityHmac();
        wrongMac[0] ^= 1;
        RunRecord forged = new RunRecord(real.scopeIdHex(), real.keyGeneration(), RUN, real.runGeneration(), RunPhase.SUSPENDED,
                new RunRecord.SnapshotBinding(real.snapshot().format(), 7, 1, real.snapshot().payloadSha256(), wrongMac));
        try (AuthorityIdentity id = AuthorityIdentity.parse(dir.visibleFile(AuthorityIdentity.FILE_NAME));
             HmacSha256 recordMac = new HmacSha256(id.masterKey())) {
            dir.putFile(stateName(), RecordCodec.signedFile(forged, recordMac));
        }
        assertThat(a.inspect(new RunId(RUN))).as("the forged record verifies as a record").contains(forged);
        Map<String, byte[]> before = dir.snapshotFiles();

        assertThatThrownBy(() -> a.reissue(S7)).isInstanceOf(AuthorityException.Verification.class);
        assertSameFiles(dir, before);
        a.close();
    }

    @Test
    void reissue_fencedRun_uncertain_nothingWritten() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        owner.seal(S7, NONE);
        // The resume's rename is called and fails without taking effect: the record is still
        // SUSPENDED at the same snapshot, but this process cannot know that, so the run is fenced.
        dir.failAt(MemoryDirectory.Step.RENAME_FAILS, 0, false);
        assertThatThrownBy(() -> owner.resume(NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        dir.clearFault();
        assertThat(a.isFenced(new RunId(RUN))).isTrue();
        assertThat(a.inspect(new RunId(RUN))).map(RunRecord::phase).contains(RunPhase.SUSPENDED);
        Map<String, byte[]> before = dir.snapshotFiles();

        assertThatThrownBy(() -> a.reissue(S7)).isInstanceOf(AuthorityException.Uncertain.class);
        assertSameFiles(dir, before);
        a.close();
    }

    private static void assertSameFiles(MemoryDirectory dir, Map<String, byte[]> before) {
        Map<String, byte[]> now = dir.snapshotFiles();
        assertThat(now.keySet()).as("directory listing").isEqualTo(before.keySet());
        for (String name : before.keySet()) {
            assertThat(now.get(name)).as(name).isEqualTo(before.get(name));
        }
    }
}
