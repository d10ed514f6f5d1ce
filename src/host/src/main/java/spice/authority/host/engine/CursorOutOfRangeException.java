package spice.authority.host.engine;

/**
 * A subscription cursor outside the retained window of a run's event log. {@link #recoveryCursor()}
 * is where the subscriber may start again: after an import that is the snapshot's sequence (the
 * imported log holds no earlier events); beyond the head it is the head.
 */
public final class CursorOutOfRangeException extends Exception {
    private static final long serialVersionUID = 1L;
    private final long cursor;
    private final long recoveryCursor;

    CursorOutOfRangeException(long cursor, long firstRetained, long head, long recoveryCursor) {
        super("cursor " + Long.toUnsignedString(cursor) + " is outside the retained events ["
                + Long.toUnsignedString(firstRetained) + ", " + Long.toUnsignedString(head)
                + "]; recover from " + Long.toUnsignedString(recoveryCursor), null, false, false);
        this.cursor = cursor;
        this.recoveryCursor = recoveryCursor;
    }

    public long cursor() {
        return cursor;
    }

    /** The cursor to resubscribe with. */
    public long recoveryCursor() {
        return recoveryCursor;
    }
}
