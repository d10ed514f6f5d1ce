package spice.authority.core;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The records of an authority directory ({@link RunAuthority#listRecords()}): the verified ones,
 * sorted by run ID, and how many {@code run-*.state} entries were not a record of this authority,
 * by {@link UnreadableReason}. Holds no MACs; its {@link #toString()} shows none.
 *
 * @param records the verified records, sorted by run ID
 * @param unreadableByReason the entries counted instead of listed, by reason (only reasons seen)
 */
public record RecordListing(List<RunRecord> records, Map<UnreadableReason, Integer> unreadableByReason) {

    public RecordListing {
        records = List.copyOf(records);
        EnumMap<UnreadableReason, Integer> copy = new EnumMap<>(UnreadableReason.class);
        unreadableByReason.forEach((reason, n) -> {
            if (n < 0) {
                throw new IllegalArgumentException("unreadable counts must not be negative");
            }
            if (n > 0) {
                copy.put(reason, n);
            }
        });
        unreadableByReason = Collections.unmodifiableMap(copy);
    }

    /** The entries counted instead of listed, all reasons together. */
    public int unreadable() {
        return unreadableByReason.values().stream().mapToInt(Integer::intValue).sum();
    }
}
