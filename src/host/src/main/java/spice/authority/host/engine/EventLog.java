package spice.authority.host.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A run's append-only, bounded event log. Sequences are consecutive unsigned 64-bit numbers that
 * never wrap; the first is 1 for a new run and {@code last_sequence + 1} for an imported one, which
 * holds no copy of pre-snapshot events.
 *
 * <p>Guarantees: the retained window is {@code [first, head]} (empty as {@code [N+1, N]} right after
 * an import of a snapshot at N). A read with a cursor {@code c} returns the events after {@code c};
 * a cursor below {@code first - 1} or above {@code head} fails with a recovery cursor
 * (wire-format.md f.8): {@code first - 1}, respectively {@code head}. Thread-safe.
 */
public final class EventLog {
    private final int capacity;
    private final ArrayDeque<Event> retained = new ArrayDeque<>();
    private final List<EventListener> listeners = new CopyOnWriteArrayList<>();
    private long first;
    private long head;

    /**
     * A log whose next event gets {@code firstSequence} (unsigned, 1..2^64-1: an import continues
     * after any last_sequence of 1..2^64-2), retaining at most {@code capacity} events.
     */
    EventLog(long firstSequence, int capacity) {
        if (firstSequence == 0 || capacity < 1) {
            throw new IllegalArgumentException("first sequence and capacity must be positive");
        }
        this.capacity = capacity;
        this.first = firstSequence;
        this.head = firstSequence - 1;
    }

    /** Registers a listener for events committed from now on. */
    public void listen(EventListener l) {
        listeners.add(l);
    }

    /** The last committed sequence ({@code first - 1} when nothing was committed). */
    public synchronized long head() {
        return head;
    }

    /** The earliest retained sequence. */
    public synchronized long firstRetained() {
        return first;
    }

    /** The sequence the next event will get. */
    synchronized long next() {
        return head + 1;
    }

    Event append(String runId, Event.Type type, int turn, String callId, String messageId, String toolName) {
        Event e;
        synchronized (this) {
            if (head == -1L) {
                // Sequences are unsigned 64-bit and never wrap: 2^64-1 was the last one.
                throw new IllegalStateException("run " + runId + ": the event sequence space is exhausted");
            }
            e = new Event(head + 1, runId, type, turn, callId, messageId, toolName);
            retained.addLast(e);
            head = e.sequence();
            if (retained.size() > capacity) {
                retained.removeFirst();
                first++;
            }
        }
        for (EventListener l : listeners) {
            try {
                l.committed(e);
            } catch (RuntimeException ignored) {
                // SECURITY: an observer's failure never interrupts a transition half-way.
            }
        }
        return e;
    }

    /**
     * The retained events after {@code cursor}.
     *
     * @throws CursorOutOfRangeException when events after the cursor are no longer (or not yet) here
     */
    public synchronized List<Event> readAfter(long cursor) throws CursorOutOfRangeException {
        if (Long.compareUnsigned(cursor, first - 1) < 0) {
            throw new CursorOutOfRangeException(cursor, first, head, first - 1);
        }
        if (Long.compareUnsigned(cursor, head) > 0) {
            throw new CursorOutOfRangeException(cursor, first, head, head);
        }
        List<Event> out = new ArrayList<>();
        for (Event e : retained) {
            if (Long.compareUnsigned(e.sequence(), cursor) > 0) {
                out.add(e);
            }
        }
        return out;
    }
}
