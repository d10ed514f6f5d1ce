package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;

/** {@link RecordLister}: verified records sorted by run ID, the rest counted; never a partial list. */
class RecordListerTest {

    private static RunRecord write(Parts p, String runId, RunPhase phase) throws Exception {
        RunId id = new RunId(runId);
        RunRecord rec = p.store.newRecord(id, 1, phase, null);
        p.store.writeSigned(id, p.store.sign(rec));
        return rec;
    }

    @Test
    void list_sortsTheVerified_countsTheOthers_ignoresOtherFiles() throws Exception {
        try (Parts p = new Parts()) {
            RunRecord b = write(p, "b", RunPhase.ACTIVE);
            RunRecord a = write(p, "a", RunPhase.CANCELLED);
            p.dir.putFile("run-" + "0".repeat(64) + ".state", "junk".getBytes(StandardCharsets.UTF_8));
            p.dir.putFile("run-short.state", new byte[0]);
            p.dir.putFile("notes.txt", new byte[0]);
            // A's record copied under another run's name: misnamed, counted.
            p.dir.putFile(RecordCodec.fileStem("c") + ".state", p.dir.visibleFile(RecordCodec.fileStem("a") + ".state"));

            RecordListing listing = p.lister.list();
            assertThat(listing.records()).containsExactly(a, b);
            assertThat(listing.unreadable()).isEqualTo(3);
        }
    }

    @Test
    void list_aDirectoryThatCannotBeListed_isUnavailable() throws Exception {
        try (Parts p = new Parts()) {
            write(p, "a", RunPhase.ACTIVE);
            p.dir.failList(new DirectoryRefusedException(Category.IO, p.dir.path(), "injected"));
            assertThatThrownBy(p.lister::list).isInstanceOf(AuthorityException.Unavailable.class)
                    .hasMessageStartingWith("authority directory cannot be listed: ");
        }
    }

    @Test
    void readStateFile_verifiesUnderItsName_goneIsEmpty() throws Exception {
        try (Parts p = new Parts()) {
            RunRecord a = write(p, "a", RunPhase.ACTIVE);
            String name = RecordCodec.fileStem("a") + ".state";
            assertThat(p.lister.readStateFile(name)).contains(a);
            p.dir.deleteFile(name);
            assertThat(p.lister.readStateFile(name)).isEmpty();
        }
    }
}
