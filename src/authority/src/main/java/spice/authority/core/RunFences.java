package spice.authority.core;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import spice.authority.snapshot.RunId;

/**
 * The runs fenced as uncertain in this process (wire-format.md e.6): a write whose outcome is
 * unknown fences its run, and no caller may act on it until a restart of this process reads the
 * truth from disk.
 *
 * <p><b>Guarantees.</b> A fence is never lifted. The record the first fencing write tried to
 * write is kept (later ones do not replace it). Thread-safe.
 */
final class RunFences {
    /** Runs fenced in this process, each with the record the write that fenced it tried to write. */
    private final Map<RunId, RunRecord> fenced = new ConcurrentHashMap<>();

    boolean isFenced(RunId id) {
        return fenced.containsKey(id);
    }

    /** Refuses a fenced run as {@code uncertain}. */
    void check(RunId id) throws AuthorityException.Uncertain {
        if (isFenced(id)) {
            throw new AuthorityException.Uncertain("run " + id + " is uncertain in this process: an earlier write's outcome is unknown; "
                    + "inspect it after a restart, never retry automatically");
        }
    }

    /** Fences {@code id}; {@code attempted} is the record the uncertain write tried to write (the first one is kept). */
    void fence(RunId id, RunRecord attempted) {
        fenced.putIfAbsent(id, attempted);
    }

    /** The record the write that fenced {@code id} tried to write, while it is fenced. */
    Optional<RunRecord> attempted(RunId id) {
        return Optional.ofNullable(fenced.get(id));
    }

    /** Every fenced run's attempted record, by run ID (a copy). */
    Map<RunId, RunRecord> all() {
        return Map.copyOf(fenced);
    }
}
