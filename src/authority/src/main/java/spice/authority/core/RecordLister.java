package spice.authority.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.UnsupportedPlatformException;

/**
 * The listing of an authority directory's records ({@link RunAuthority#listRecords()},
 * {@link RunAuthority#readStateFile}): every {@code run-*.state} entry of the retained directory,
 * never listed by path, read and verified under the name it sits under.
 *
 * <p><b>Guarantees.</b> A listed record verifies, is ours and names the run whose hashed file
 * name it sits under. Entries that are not a record of this authority are counted by
 * {@link UnreadableReason}, not listed;
 * entries gone since the listing are skipped; other files are ignored. A directory that cannot be
 * listed, or a record that cannot be read for an I/O error, fails the listing as a whole: never a
 * partial list. The caller holds a lease while it runs.
 */
final class RecordLister {
    private final RecordStore store;

    RecordLister(RecordStore store) {
        this.store = store;
    }

    /** The verified records by run ID, and the count of the others by reason. */
    RecordListing list() throws AuthorityException {
        List<String> names;
        try {
            names = store.directory().list();
        } catch (DirectoryRefusedException | UnsupportedPlatformException e) {
            throw new AuthorityException.Unavailable("authority directory cannot be listed: " + e.getMessage());
        }
        List<RunRecord> records = new ArrayList<>();
        Map<UnreadableReason, Integer> unreadable = new EnumMap<>(UnreadableReason.class);
        for (String name : names) {
            if (!name.startsWith("run-") || !name.endsWith(".state")) {
                continue;
            }
            try {
                listedRecord(name).ifPresent(records::add);
            } catch (RecordStore.Unreadable e) {
                unreadable.merge(e.reason(), 1, Integer::sum);
            }
        }
        records.sort(Comparator.comparing(RunRecord::runId));
        return new RecordListing(records, unreadable);
    }

    /**
     * One listed record.
     *
     * @return empty when the file is gone since the listing
     * @throws RecordStore.Unreadable when the entry is not a record of this authority, and why
     * @throws AuthorityException.Unavailable for an I/O error
     */
    private Optional<RunRecord> listedRecord(String fileName) throws AuthorityException, RecordStore.Unreadable {
        if (!RecordStore.RECORD_FILE.matcher(fileName).matches()) {
            throw new RecordStore.Unreadable(UnreadableReason.MISNAMED, null);
        }
        byte[] file;
        try {
            file = store.directory().read(fileName, RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            switch (e.category()) {
                case MISSING -> {
                    return Optional.empty(); // RACE: removed since the listing
                }
                case IO -> throw new AuthorityException.Unavailable("record cannot be read: " + e.getMessage());
                default -> throw new RecordStore.Unreadable(UnreadableReason.REFUSED_FILE, null); // not a record file of ours
            }
        }
        return Optional.of(store.verifyNamed(file, fileName));
    }

    /**
     * Reads and verifies one state file found by listing the directory; the caller checked the
     * name's shape.
     *
     * @return empty when the file vanished
     * @throws AuthorityException.Verification when unverifiable, foreign or misnamed
     */
    Optional<RunRecord> readStateFile(String fileName) throws AuthorityException {
        byte[] file;
        try {
            file = store.directory().read(fileName, RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                return Optional.empty();
            }
            throw new AuthorityException.Unavailable("record refused: " + e.getMessage());
        }
        try {
            return Optional.of(store.verifyNamed(file, fileName));
        } catch (RecordStore.Unreadable e) {
            throw e.toAuthority(fileName);
        }
    }
}
