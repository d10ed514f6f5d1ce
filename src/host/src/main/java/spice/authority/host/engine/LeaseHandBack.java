package spice.authority.host.engine;

/**
 * After a call whose answer was lost and which may have leased the run to the engine's session
 * (a start, an activate, a local resume), the engine hands the lease back to the helper so the run
 * is not owned, and so not abandonable, until the session ends. What came of it.
 */
public enum LeaseHandBack {
    /** No hand-back was needed or tried. */
    NONE,
    /** The helper released the session's lease: the call had taken effect; the run is ACTIVE with no owner. */
    HANDED_BACK,
    /** The helper answered that the session held no lease of the run: the call had not taken effect (yet). */
    NOT_HELD,
    /** Unknown: the release failed; the session's end releases any lease. */
    UNKNOWN
}
