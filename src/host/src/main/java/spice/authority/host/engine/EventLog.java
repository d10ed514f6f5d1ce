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
    /** Events from before this engine, served below {@link #first}; or {@code null}. */
    private final EventHistory older;

    /**
     * A log whose next event gets {@code firstSequence} (unsigned, 1..2^64-1: an import continues
     * after any last_sequence of 1..2^64-2), retaining at most {@code capacity} events.
     */
    EventLog(long firstSequence, int capacity) {
        this(firstSequence, capacity, null);
    }

    /**
     * As {@link #EventLog(long, int)}, with the events of the run from before this engine: a
     * cursor from {@code older.oldest() - 1} on is served from it.
     */
    EventLog(long firstSequence, int capacity, EventHistory older) {
        if (firstSequence == 0 || capacity < 1) {
            throw new IllegalArgumentException("first sequence and capacity must be positive");
        }
        this.older = older;
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
        Event e = peek(runId, type, turn, callId, messageId, toolName);
        commit(e);
        return e;
    }

    /** The event the next append would commit; nothing changes. */
    synchronized Event peek(String runId, Event.Type type, int turn, String callId, String messageId, String toolName) {
        if (head == -1L) {
            // Sequences are unsigned 64-bit and never wrap: 2^64-1 was the last one.
            throw new IllegalStateException("run " + runId + ": the event sequence space is exhausted");
        }
        return new Event(head + 1, runId, type, turn, callId, messageId, toolName);
    }

    /** Commits {@code e}, which must be the next event ({@link #peek}), and tells the listeners. */
    void commit(Event e) {
        synchronized (this) {
            if (e.sequence() != head + 1 || head == -1L) {
                throw new IllegalStateException("event " + Long.toUnsignedString(e.sequence()) + " is not the next one");
            }
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
    }

    /**
     * The retained events after {@code cursor}.
     *
     * @throws CursorOutOfRangeException when events after the cursor are no longer (or not yet) here
     */
    public List<Event> readAfter(long cursor) throws CursorOutOfRangeException {
        long retainedFirst;
        synchronized (this) {
            retainedFirst = first;
            if (Long.compareUnsigned(cursor, head) > 0) {
                throw new CursorOutOfRangeException(cursor, first, head, head);
            }
            if (Long.compareUnsigned(cursor, first - 1) >= 0) {
                return retainedAfter(cursor);
            }
            if (older == null || Long.compareUnsigned(cursor, older.oldest() - 1) < 0) {
                long oldest = older == null ? first : older.oldest();
                throw new CursorOutOfRangeException(cursor, oldest, head, oldest - 1);
            }
        }
        // Outside the lock: the history reads a store. Events of the engine's own log that left the
        // window since are read from the history too (the recorder holds every event).
        List<Event> out = new ArrayList<>(older.read(cursor, retainedFirst - 1));
        synchronized (this) {
            long after = out.isEmpty() ? cursor : out.get(out.size() - 1).sequence();
            if (Long.compareUnsigned(after, first - 1) < 0) {
                out.addAll(older.read(after, first - 1));
                after = out.isEmpty() ? cursor : out.get(out.size() - 1).sequence();
            }
            out.addAll(retainedAfter(after));
        }
        return out;
    }

    private List<Event> retainedAfter(long cursor) {
        List<Event> out = new ArrayList<>();
        for (Event e : retained) {
            if (Long.compareUnsigned(e.sequence(), cursor) > 0) {
                out.add(e);
            }
        }
        return out;
    }
}
