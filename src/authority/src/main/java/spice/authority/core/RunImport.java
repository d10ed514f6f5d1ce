package spice.authority.core;

import spice.authority.os.StableLock;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.VerificationException;

/**
 * A prepared import (wire-format.md e.1 "Import"): holds the run lock and one lease, the source
 * run generation, the prepared claim and its subkey verifier.
 *
 * <p><b>Guarantees.</b> {@link #consume} durably writes IMPORTING at the next generation: the
 * consume point. {@link #activate} durably writes ACTIVE at that generation and moves the lock and
 * lease into the returned {@link ActiveRun}. Before consume, {@link #abort()} is clean; after it,
 * abort reports {@code uncertain}. A failure after a writer was invoked makes the import
 * terminally uncertain; the lock stays held until abort or close. Thread-safe.
 */
public final class RunImport implements AutoCloseable {
    private final Transitions store;
    private final RunId runId;
    private StableLock lock;
    private final long sourceGeneration;
    private final Claim preparedClaim;
    private final AuthorityKey verifier;
    private boolean consumed;
    private boolean uncertain;
    private boolean closed;
    /** Activated: the lock and lease moved to the returned run; an abort is refused. */
    private boolean activated;

    RunImport(Transitions store, RunId runId, StableLock lock, long sourceGeneration, Claim claim,
              AuthorityKey verifier) {
        this.store = store;
        this.runId = runId;
        this.lock = lock;
        this.sourceGeneration = sourceGeneration;
        this.preparedClaim = claim;
        this.verifier = verifier;
    }

    public RunId runId() {
        return runId;
    }

    /** The run generation of the SUSPENDED record being imported; consume writes the next one. */
    public long sourceGeneration() {
        return sourceGeneration;
    }

    public synchronized boolean isConsumed() {
        return consumed;
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    private void requireCertain() throws AuthorityException.Uncertain {
        assert Thread.holdsLock(this);
        if (uncertain) {
            throw new AuthorityException.Uncertain("import of run " + runId + " is uncertain");
        }
    }

    /** Re-runs keyed verification against exactly the prepared claim. */
    public synchronized void verifySnapshot(ClaimInput input, Claim claim) throws AuthorityException {
        requireCertain();
        if (closed || consumed || input == null || claim == null || !runId.value().equals(input.runId()) || !preparedClaim.sameAs(claim)) {
            throw new AuthorityException.Verification();
        }
        try {
            verifier.verify(input, claim);
        } catch (VerificationException | RuntimeException e) {
            throw new AuthorityException.Verification();
        }
    }

    /** The consume point: durable IMPORTING at the next generation. */
    public synchronized void consume(Cancellation c) throws AuthorityException {
        requireCertain();
        if (closed || consumed) {
            throw new AuthorityException.State("import of run " + runId + " is " + (closed ? "closed" : "already consumed"));
        }
        c.check("consume " + runId);
        if (Transitions.generationExhausted(sourceGeneration)) {
            throw new AuthorityException.State("run " + runId + ": run generation exhausted");
        }
        try {
            store.writeTransition(runId, store.newRecord(runId, sourceGeneration + 1, RunPhase.IMPORTING, null), c, "consume");
        } catch (AuthorityException.Uncertain e) {
            consumed = true;
            uncertain = true;
            throw e;
        }
        consumed = true;
    }

    /** Durable ACTIVE at the consumed generation; the lock and lease move to the returned run. */
    public synchronized ActiveRun activate(Cancellation c) throws AuthorityException {
        requireCertain();
        if (closed || !consumed || lock == null) {
            throw new AuthorityException.State("import of run " + runId + " is " + (closed ? "closed" : "not consumed"));
        }
        c.check("activate " + runId);
        long g = sourceGeneration + 1;
        try {
            store.writeTransition(runId, store.newRecord(runId, g, RunPhase.ACTIVE, null), c, "activate");
        } catch (AuthorityException.Uncertain e) {
            uncertain = true; // the lock stays with this import until abort or close
            throw e;
        }
        ActiveRun active = new ActiveRun(store, runId, lock, g);
        lock = null;
        closed = true;
        activated = true;
        verifier.close();
        return active;
    }

    /**
     * Releases the lock and lease. Clean before consume; after consume (or when uncertain) the
     * run's outcome is unknown and this reports {@code uncertain}. Idempotent once aborted.
     *
     * @throws AuthorityException.State the import was activated (an abort that waited for the
     *     activation, or came after it): nothing is aborted, the run is ACTIVE and its lease went
     *     to the activation; answering a clean abort would tell the caller the opposite
     */
    public synchronized void abort() throws AuthorityException.Uncertain, AuthorityException.State {
        if (activated) {
            throw new AuthorityException.State("import of run " + runId + " was already activated: the run is ACTIVE at generation "
                    + Long.toUnsignedString(sourceGeneration + 1) + " and its lease belongs to the activation");
        }
        if (closed) {
            return;
        }
        closed = true;
        verifier.close();
        StableLock l = lock;
        lock = null;
        if (l != null) {
            try {
                l.close();
            } finally {
                store.releaseLease(); // even past an Error: the authority's shutdown waits for every lease
            }
        }
        if (consumed) {
            throw new AuthorityException.Uncertain("import of run " + runId + " was aborted after its consume point; "
                    + "the run stays IMPORTING until an operator abandons it");
        }
        if (uncertain) {
            throw new AuthorityException.Uncertain("import of run " + runId + " was aborted after a consume whose outcome "
                    + "is unknown: the run is SUSPENDED or IMPORTING, and fenced in this process until it restarts; "
                    + "then inspect it, and abandon it if it is IMPORTING");
        }
    }

    /** Same as {@link #abort()}, except that an activated import closes quietly (its run lives on). */
    @Override
    public void close() throws AuthorityException.Uncertain {
        try {
            abort();
        } catch (AuthorityException.State activated) {
            // the lock and lease went to the activated run
        }
    }

    @Override
    public synchronized String toString() {
        return "RunImport[run_id=" + runId + ", source_generation=" + Long.toUnsignedString(sourceGeneration)
                + ", consumed=" + consumed + ", uncertain=" + uncertain + ", activated=" + activated + ", closed=" + closed + "]";
    }
}
