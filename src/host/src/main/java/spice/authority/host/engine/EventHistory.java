package spice.authority.host.engine;

import java.util.List;

/**
 * Events of a run from before it came into this engine (its store kept them), so that a cursor
 * inside them is served instead of failing with a recovery cursor.
 */
public interface EventHistory {
    /** The oldest sequence this history holds. */
    long oldest();

    /** The events after {@code cursor} up to and including {@code upTo}, in order. */
    List<Event> read(long cursor, long upTo);
}
