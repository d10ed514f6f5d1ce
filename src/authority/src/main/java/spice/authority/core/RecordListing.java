package spice.authority.core;

import java.util.List;

/**
 * The records of an authority directory ({@link RunAuthority#listRecords()}): the verified ones,
 * sorted by run ID, and how many {@code run-*.state} entries were not a record of this authority
 * (unverifiable, foreign, misnamed, or breaking the file rule). Holds no MACs; its
 * {@link #toString()} shows none.
 *
 * @param records the verified records, sorted by run ID
 * @param unreadable the entries counted instead of listed
 */
public record RecordListing(List<RunRecord> records, int unreadable) {

    public RecordListing {
        records = List.copyOf(records);
        if (unreadable < 0) {
            throw new IllegalArgumentException("unreadable must not be negative");
        }
    }
}
