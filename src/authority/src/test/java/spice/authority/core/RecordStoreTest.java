package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import spice.authority.os.StableLock;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;

/**
 * {@link RecordStore}: a record reads back only when its MAC verifies under this authority's key
 * and it is ours and names the run asked for; run locks; the identity proof.
 */
class RecordStoreTest {
    private static final RunId RUN = new RunId("run-1");

    private static String state(RunId id) {
        return RecordCodec.fileStem(id.value()) + ".state";
    }

    @Test
    void aWrittenRecord_readsBack_absentIsEmpty() throws Exception {
        try (Parts p = new Parts()) {
            assertThat(p.store.readRecord(RUN)).isEmpty();
            RunRecord rec = p.store.newRecord(RUN, 3, RunPhase.ACTIVE, null);
            assertThat(rec.scopeIdHex()).isEqualTo(p.identity.scopeIdHex());
            assertThat(rec.keyGeneration()).isEqualTo(p.identity.generation());
            p.store.writeSigned(RUN, p.store.sign(rec));
            assertThat(p.store.readRecord(RUN)).contains(rec);
            assertThat(p.store.verifyNamed(p.dir.visibleFile(state(RUN)), state(RUN))).isEqualTo(rec);
        }
    }

    @Test
    void aTamperedRecord_anotherRunsRecord_orAnotherScopes_isOneVerificationFailure() throws Exception {
        try (Parts p = new Parts(); Parts other = new Parts()) {
            RunId run2 = new RunId("run-2");
            byte[] good = p.store.sign(p.store.newRecord(RUN, 1, RunPhase.ACTIVE, null));
            byte[] tampered = new String(good, StandardCharsets.UTF_8).replace("\"ACTIVE\"", "\"FAILED\"")
                    .getBytes(StandardCharsets.UTF_8);
            assertThat(tampered).isNotEqualTo(good);
            byte[] ofRun2 = p.store.sign(p.store.newRecord(run2, 1, RunPhase.ACTIVE, null));
            byte[] ofOtherScope = other.store.sign(other.store.newRecord(RUN, 1, RunPhase.ACTIVE, null));
            for (byte[] file : new byte[][] {tampered, ofRun2, ofOtherScope}) {
                p.dir.putFile(state(RUN), file);
                assertThatThrownBy(() -> p.store.readRecord(RUN)).isInstanceOf(AuthorityException.Verification.class)
                        .hasMessage(AuthorityException.Verification.MESSAGE);
            }
            // Renamed under another run's name: the record names run-2, the file is run-1's.
            assertThatThrownBy(() -> p.store.verifyNamed(ofRun2, state(RUN))).isInstanceOfSatisfying(RecordStore.Unreadable.class,
                    e -> assertThat(e.reason()).isEqualTo(UnreadableReason.MISNAMED));
            assertThatThrownBy(() -> p.store.verifyNamed(tampered, state(RUN))).isInstanceOfSatisfying(RecordStore.Unreadable.class,
                    e -> assertThat(e.reason()).isEqualTo(UnreadableReason.BAD_MAC));
            assertThatThrownBy(() -> p.store.verifyNamed(ofOtherScope, state(RUN))).isInstanceOfSatisfying(RecordStore.Unreadable.class,
                    e -> assertThat(e.reason()).isEqualTo(UnreadableReason.BAD_MAC));
            assertThat(p.store.verifyNamed(ofRun2, state(run2)).runId()).isEqualTo("run-2");
        }
    }

    @Test
    void aRecordUnderAWiderRunId_verifiesByMac_butIsForeign() throws Exception {
        try (Parts p = new Parts(); HmacSha256 mac = new HmacSha256(p.identity.masterKey())) {
            String wide = "w".repeat(RunId.MAX_BYTES + 1);
            byte[] file = RecordCodec.signedFile(new RunRecord(p.identity.scopeIdHex(), p.identity.generation(), wide, 1,
                    RunPhase.ACTIVE, null), mac);
            String name = RecordCodec.fileStem(wide) + ".state";
            assertThatThrownBy(() -> p.store.verifyNamed(file, name)).isInstanceOfSatisfying(RecordStore.Unreadable.class,
                    e -> assertThat(e.reason()).isEqualTo(UnreadableReason.FOREIGN));
        }
    }

    @Test
    void lockRun_heldElsewhere_isBusy_andFreeAfterRelease() throws Exception {
        try (Parts p = new Parts()) {
            StableLock held = p.store.lockRun(RUN);
            assertThatThrownBy(() -> p.store.lockRun(RUN)).isInstanceOf(AuthorityException.Busy.class)
                    .hasMessage("run run-1 is owned by a live process");
            held.close();
            p.store.lockRun(RUN).close();
            assertThat(p.dir.visibleFile(RecordCodec.fileStem("run-1") + ".lock")).isNotNull();
        }
    }

    @Test
    void revalidate_refusesAReplacedIdentityFile_untilRestored() throws Exception {
        try (Parts p = new Parts()) {
            p.store.revalidate();
            MemoryDirectory.Status before = p.dir.statusOf(RecordStore.IDENTITY_KEY);
            p.dir.replaceKeepingContent(RecordStore.IDENTITY_KEY);
            assertThatThrownBy(p.store::revalidate).isInstanceOf(AuthorityException.Unavailable.class)
                    .hasMessageStartingWith("identity file refused, nothing written: ");
            p.dir.restore(RecordStore.IDENTITY_KEY, before);
            p.store.revalidate();
        }
    }

    @Test
    void readRecordBytesForImport_absentIsVerification() throws Exception {
        try (Parts p = new Parts()) {
            assertThatThrownBy(() -> p.store.readRecordBytesForImport(RUN)).isInstanceOf(AuthorityException.Verification.class);
        }
    }
}
