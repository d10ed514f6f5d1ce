package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.ForwardingSecureDirectory;
import spice.authority.os.LockMode;
import spice.authority.os.StableLock;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;

/**
 * {@link RunAuthority#open} removes the temporary files of interrupted writes, and nothing else;
 * {@link RunAuthority#listRecords()} lists through the directory and counts what is not a record.
 */
class SweepAndListingTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String HEX24 = "0123456789abcdef01234567";
    private static final byte[] JUNK = "left by a crash".getBytes(StandardCharsets.UTF_8);

    private static String stem(String runId) {
        return RecordCodec.fileStem(runId);
    }

    /**
     * A directory with one released run ("kept") and its record, lock and identity files. The
     * authorities opened on it here are left open: closing one closes the shared directory.
     */
    private static MemoryDirectory populated() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        a.start(new RunId("kept"), NONE).close();
        return dir;
    }

    @Test
    void open_removesTheTemporariesOfIdentityAndRecordWrites_andNothingElse() throws Exception {
        MemoryDirectory dir = populated();
        String record = stem("kept") + ".state";
        List<String> swept = List.of(
                ".identity.key." + HEX24 + ".tmp",
                "." + record + "." + HEX24 + ".tmp", // its run's lock is free
                "." + stem("never-locked") + ".state." + "fedcba9876543210fedcba98" + ".tmp"); // no lock file at all
        List<String> nearMisses = List.of(
                "." + record + "." + HEX24.substring(1) + ".tmp",           // 23 hex
                "." + record + "." + HEX24.toUpperCase() + ".tmp",          // upper case
                "." + record + "." + HEX24 + ".tmp.bak",
                "." + record + "." + HEX24 + ".TMP",
                "." + stem("kept") + ".lock." + HEX24 + ".tmp",             // a lock is never written
                ".helper.state." + HEX24 + ".tmp",                          // not a file this authority writes
                ".run-abc.state." + HEX24 + ".tmp",                         // not a record name
                "." + record.toUpperCase() + "." + HEX24 + ".tmp",
                "run-" + "ab".repeat(32) + ".state." + HEX24 + ".tmp",      // no leading dot: a valid name
                "notes.txt");
        for (String n : swept) {
            dir.plant(n, JUNK);
        }
        for (String n : nearMisses) {
            dir.plant(n, JUNK);
        }
        Map<String, byte[]> before = dir.snapshotFiles();

        RunAuthority a = Fixtures.open(dir);

        assertThat(a.sweptTempFiles()).isEqualTo(3);
        Map<String, byte[]> after = dir.snapshotFiles();
        assertThat(after.keySet()).containsExactlyInAnyOrderElementsOf(
                before.keySet().stream().filter(n -> !swept.contains(n)).toList());
        for (String n : after.keySet()) {
            assertThat(after.get(n)).as(n).isEqualTo(before.get(n));
        }
        assertThat(a.inspect(new RunId("kept")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
        assertThat(a.sweptTempFiles()).isEqualTo(3); // a count fixed at open
        assertThat(Fixtures.open(dir).sweptTempFiles()).isZero();
    }

    @Test
    void open_keepsTheTemporaryOfARunWhoseLockIsHeld_becauseItsWriteMayBeInFlight() throws Exception {
        MemoryDirectory dir = populated();
        String temp = "." + stem("kept") + ".state." + HEX24 + ".tmp";
        dir.plant(temp, JUNK);
        StableLock owner = dir.lock(stem("kept") + ".lock", LockMode.NON_BLOCKING); // a live owner elsewhere
        RunAuthority a = Fixtures.open(dir);
        assertThat(a.sweptTempFiles()).isZero();
        assertThat(dir.visibleFile(temp)).isEqualTo(JUNK);
        owner.close();
        RunAuthority b = Fixtures.open(dir);
        assertThat(b.sweptTempFiles()).isEqualTo(1);
        assertThat(dir.visibleFile(temp)).isNull();
        assertThat(dir.isLocked(stem("kept") + ".lock")).isFalse(); // the sweep let go of the lock
    }

    @Test
    void open_whenTheDirectoryCannotBeListed_opensAndSweepsNothing() throws Exception {
        MemoryDirectory dir = populated();
        String temp = ".identity.key." + HEX24 + ".tmp";
        dir.plant(temp, JUNK);
        dir.failList(new DirectoryRefusedException(Category.IO, dir.path(), "getdents64: EIO"));
        RunAuthority a = Fixtures.open(dir);
        assertThat(a.sweptTempFiles()).isZero();
        assertThat(dir.visibleFile(temp)).isEqualTo(JUNK);
        assertThat(a.inspect(new RunId("kept"))).isPresent();
    }

    @Test
    void open_aTemporaryThatIsASymlink_isKept_andTheOthersAreStillRemoved() throws Exception {
        MemoryDirectory dir = populated();
        String link = ".identity.key." + HEX24 + ".tmp";
        String plain = "." + stem("kept") + ".state." + HEX24 + ".tmp";
        dir.plant(link, JUNK);
        dir.replaceWithSymlink(link);
        dir.plant(plain, JUNK);
        RunAuthority a = Fixtures.open(dir);
        assertThat(a.sweptTempFiles()).isEqualTo(1);
        assertThat(dir.visibleFile(link)).isEqualTo(JUNK);
        assertThat(dir.visibleFile(plain)).isNull();
    }

    // ---- listing ------------------------------------------------------------------------------

    @Test
    void listRecords_listsVerifiedRecords_countsEveryOtherRecordName_ignoresOtherFiles() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        a.start(new RunId("b-run"), NONE).close();
        ActiveRun r = a.start(new RunId("a-run"), NONE);
        r.seal(Fixtures.suspended("a-run", 7), NONE);
        r.close();
        // A record of another authority (another scope) under its own name: foreign.
        MemoryDirectory other = new MemoryDirectory();
        RunAuthority b = Fixtures.open(other);
        b.start(new RunId("foreign"), NONE).close();
        dir.plant(stem("foreign") + ".state", other.visibleFile(stem("foreign") + ".state"));
        // A valid record under another run's name: misnamed.
        dir.plant(stem("renamed") + ".state", dir.visibleFile(stem("b-run") + ".state"));
        dir.plant(stem("garbage") + ".state", JUNK);
        dir.plant("run-abc.state", JUNK);                                  // not a hashed name
        dir.plant(stem("loose") + ".state", dir.visibleFile(stem("b-run") + ".state"));
        dir.chmod(stem("loose") + ".state", 0644);                          // breaks the file rule
        dir.plant(stem("big") + ".state", new byte[RecordCodec.MAX_FILE_BYTES + 1]); // larger than a record
        dir.plant("." + stem("a-run") + ".state." + HEX24 + ".tmp", JUNK);  // ignored
        dir.plant("notes.txt", JUNK);                                       // ignored

        RecordListing listing = a.listRecords();

        assertThat(listing.records()).extracting(RunRecord::runId).containsExactly("a-run", "b-run");
        assertThat(listing.records().get(0).phase()).isEqualTo(RunPhase.SUSPENDED);
        assertThat(listing.unreadable()).isEqualTo(6);
        assertThat(listing.toString()).doesNotContain(
                java.util.HexFormat.of().formatHex(listing.records().get(0).snapshot().authorityHmac()));
        assertThat(a.outstandingLeases()).isZero();
    }

    @Test
    void listRecords_directoryCannotBeListed_isUnavailable() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        a.start(new RunId("run"), NONE).close();
        dir.failList(new DirectoryRefusedException(Category.IO, dir.path(), "getdents64: EIO"));
        assertThatThrownBy(a::listRecords).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessage("authority directory cannot be listed: /memory/authority: IO (getdents64: EIO)");
        assertThat(a.outstandingLeases()).isZero();
        dir.failList(null);
        assertThat(a.listRecords().records()).hasSize(1);
    }

    @Test
    void listRecords_recordReadFailsWithAnIoError_isUnavailable_neverAShortList() throws Exception {
        MemoryDirectory mem = new MemoryDirectory();
        String failing = stem("second") + ".state";
        boolean[] fail = {false};
        ForwardingSecureDirectory dir = new ForwardingSecureDirectory(mem) {
            @Override
            public byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
                if (fail[0] && name.equals(failing)) {
                    throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "read: EIO");
                }
                return super.read(name, maxBytes);
            }
        };
        RunAuthority a = RunAuthority.open(dir, Fixtures.random());
        a.start(new RunId("first"), NONE).close();
        a.start(new RunId("second"), NONE).close();
        fail[0] = true;
        assertThatThrownBy(a::listRecords).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageContaining("read: EIO");
        fail[0] = false;
        assertThat(a.listRecords().records()).extracting(RunRecord::runId).containsExactly("first", "second");
    }

    @Test
    void listRecords_afterClose_isClosed() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        a.close();
        assertThatThrownBy(a::listRecords).isInstanceOf(AuthorityException.Closed.class);
    }
}
