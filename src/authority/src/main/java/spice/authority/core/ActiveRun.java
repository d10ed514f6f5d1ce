package spice.authority.core;

import spice.authority.os.StableLock;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.envelope.SigningException;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Exclusive ownership of one run (wire-format.md e.1 "Active"): holds the run lock and one lease,
 * the run generation, and the remembered SUSPENDED binding.
 *
 * <p><b>Guarantees.</b> Signing SUSPENDED keeps the lock and is idempotent for the identical
 * snapshot ({@code state_conflict} for a different one); signing a terminal snapshot or
 * {@link #terminal} writes the tombstone and releases the lock; {@link #resume} durably writes
 * ACTIVE at the next generation before the host may resume, so the earlier claim never verifies
 * again. After a write whose outcome is unknown the object is terminally {@code uncertain}: only
 * {@link #close()} releases it, and its first call reports {@code uncertain}. Thread-safe.
 */
public final class ActiveRun implements AutoCloseable {
    private final Transitions store;
    private final RunId runId;
    private StableLock lock;
    private long generation;
    private RunRecord.SnapshotBinding remembered;
    private boolean uncertain;
    private boolean closed;

    ActiveRun(Transitions store, RunId runId, StableLock lock, long generation) {
        this.store = store;
        this.runId = runId;
        this.lock = lock;
        this.generation = generation;
    }

    public RunId runId() {
        return runId;
    }

    /** The current run (transition) generation. */
    public synchronized long runGeneration() {
        return generation;
    }

    public synchronized boolean isSuspended() {
        return remembered != null;
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    public synchronized boolean isUncertain() {
        return uncertain;
    }

    /**
     * What sealing a snapshot did: the signed envelope, and whether this lease ended with it (a
     * terminal snapshot's tombstone releases the lock; a SUSPENDED one keeps it).
     */
    public record Sealed(Envelope envelope, boolean leaseEnded) {}

    /**
     * Signs a snapshot, builds its envelope and persists the transition: SUSPENDED at this
     * generation with the claim bound (lock kept), or the terminal tombstone (lock released).
     *
     * <p>The envelope is complete before the record is written: a failure to build it is
     * {@code unavailable} with nothing written (retryable), and once the record is written nothing
     * is left that can fail, so a written transition is never reported as a clean failure.
     */
    private synchronized Sealed sign(Envelopes.Unsigned unsigned, Cancellation c) throws AuthorityException {
        ClaimInput input = unsigned.claimInput();
        requireLive();
        if (!runId.value().equals(input.runId())) {
            throw new AuthorityException.State("snapshot run ID differs from the owned run " + runId);
        }
        store.requireSigning(input.snapshotFormat());
        c.check("sign " + runId);
        RunPhase phase = RunPhase.ofLifecycle(input.lifecycle());
        if (phase == RunPhase.SUSPENDED && Transitions.generationExhausted(generation)) {
            throw new AuthorityException.State("run " + runId + ": run generation exhausted");
        }
        Claim claim = store.signWithSubkey(runId, generation, input);
        Envelope envelope = envelope(unsigned, claim); // before any write, so a failure wrote nothing
        if (phase == RunPhase.SUSPENDED) {
            RunRecord.SnapshotBinding binding = new RunRecord.SnapshotBinding(input.snapshotFormat(), input.lastSequence(), input.lifecycle(),
                    input.sha256(), claim.hmac());
            if (remembered != null) {
                if (remembered.equals(binding)) {
                    // identical repeat: idempotent, nothing written (the claim is deterministic, so the
                    // envelope is the one first returned)
                    return new Sealed(envelope, false);
                }
                throw new AuthorityException.State("run " + runId + " is already suspended with a different snapshot");
            }
            write(store.newRecord(runId, generation, RunPhase.SUSPENDED, binding), c, "suspend");
            remembered = binding;
            return new Sealed(envelope, false);
        }
        write(store.newRecord(runId, generation, phase, null), c, "sign terminal");
        finish();
        return new Sealed(envelope, true);
    }

    /** The envelope with {@code claim}; called before any write, so a failure wrote nothing. */
    private Envelope envelope(Envelopes.Unsigned unsigned, Claim claim) throws AuthorityException.Unavailable {
        try {
            return unsigned.seal(claim);
        } catch (SigningException e) {
            throw new AuthorityException.Unavailable("signing failed for run " + runId + ": nothing written");
        }
    }

    /**
     * Validates nothing more and seals {@code snapshot} into an envelope signed as
     * {@link #sign} does; the envelope's fields come from the snapshot itself.
     *
     * @return the envelope, and whether the lease ended with it (terminal snapshot)
     */
    public Sealed seal(Snapshot snapshot, Cancellation c) throws AuthorityException {
        return sign(Envelopes.unsigned(snapshot), c);
    }

    /** Local resume: ACTIVE at the next generation; the earlier claim never verifies again. */
    public synchronized void resume(Cancellation c) throws AuthorityException {
        requireLive();
        if (remembered == null) {
            throw new AuthorityException.State("run " + runId + " is not suspended; only a suspended run can resume");
        }
        c.check("resume " + runId);
        if (Transitions.generationExhausted(generation)) {
            throw new AuthorityException.State("run " + runId + ": run generation exhausted");
        }
        long next = generation + 1;
        write(store.newRecord(runId, next, RunPhase.ACTIVE, null), c, "resume");
        generation = next;
        remembered = null;
    }

    /** Writes a terminal tombstone without a snapshot, then releases the lock. */
    public synchronized void terminal(RunPhase phase, Cancellation c) throws AuthorityException {
        requireLive();
        if (!phase.isTerminal()) {
            throw new AuthorityException.State("terminal phase must be COMPLETED, FAILED or CANCELLED");
        }
        c.check("terminal " + runId);
        write(store.newRecord(runId, generation, phase, null), c, "terminal");
        finish();
    }

    private void write(RunRecord next, Cancellation c, String what) throws AuthorityException {
        try {
            store.writeTransition(runId, next, c, what);
        } catch (AuthorityException.Uncertain e) {
            uncertain = true;
            throw e;
        }
    }

    /** Refuses once uncertain (only close releases it) or finished (the lock is null exactly then). */
    private void requireLive() throws AuthorityException {
        if (uncertain) {
            throw new AuthorityException.Uncertain("run " + runId + " is uncertain; only close releases it");
        }
        if (closed) {
            throw new AuthorityException.Closed("run " + runId + ": this lease is finished");
        }
    }

    /** Ends this lease: releases the lock and the store lease (once; later calls do nothing). */
    private void finish() {
        closed = true;
        StableLock l = lock;
        lock = null;
        if (l != null) {
            try {
                l.close();
            } finally {
                store.releaseLease(); // even past an Error: the authority's shutdown waits for every lease
            }
        }
    }

    /**
     * Releases the lock and lease without writing (the equivalent of the owner's crash): ACTIVE
     * stays non-importable; SUSPENDED becomes importable by another owner.
     *
     * @throws AuthorityException.Uncertain on the first close of an uncertain run
     */
    @Override
    public synchronized void close() throws AuthorityException.Uncertain {
        boolean wasLive = !closed;
        finish();
        if (wasLive && uncertain) {
            throw new AuthorityException.Uncertain("run " + runId + " was closed after a write with an unknown outcome");
        }
    }

    @Override
    public synchronized String toString() {
        return "ActiveRun[run_id=" + runId + ", run_generation=" + Long.toUnsignedString(generation)
                + ", suspended=" + (remembered != null) + ", uncertain=" + uncertain + ", closed=" + closed + "]";
    }
}
