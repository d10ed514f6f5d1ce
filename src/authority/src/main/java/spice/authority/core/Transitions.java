package spice.authority.core;

import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Optional;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.StableLock;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.EnvelopeRule;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.envelope.SigningException;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The run transitions of a {@link RunAuthority} (wire-format.md e): start, prepare import,
 * abandon, reissue, and the one durable write every transition of an {@link ActiveRun} or a
 * {@link RunImport} goes through. The guarantees are those {@link RunAuthority} states; this
 * class holds the steps, in their order: argument, cancellation, fence, lease, re-validation,
 * lock, fence again, read, write.
 *
 * <p><b>Guarantees.</b> Every write is preceded by {@link RecordStore#revalidate()} and a final
 * cancellation check. A write the directory reports as failed before its rename took effect is
 * {@code unavailable} and fences nothing; any other failure once the writer was invoked fences the
 * run ({@link RunFences}) and is {@code uncertain}. Every path that does not hand a lock and a
 * lease over to an {@link ActiveRun} or a {@link RunImport} releases them.
 */
final class Transitions {
    private static final long MAX_GENERATION = -1L; // 2^64-1, unsigned

    private final AuthorityIdentity identity;
    private final RecordStore store;
    private final RunFences fences;
    private final Leases leases;
    private final FormatPolicy formats;

    Transitions(AuthorityIdentity identity, RecordStore store, RunFences fences, Leases leases, FormatPolicy formats) {
        this.identity = identity;
        this.formats = formats;
        this.store = store;
        this.fences = fences;
        this.leases = leases;
    }

    /** See {@link RunAuthority#start}. */
    ActiveRun start(RunId runId, Cancellation c) throws AuthorityException {
        enterRunOperation("start", runId, c);
        StableLock lock = null;
        boolean handedOver = false;
        try {
            lock = store.lockRun(runId);
            fences.check(runId); // RACE: a write may have failed (and fenced) while we waited for the lock
            Optional<RunRecord> existing = store.readRecord(runId);
            if (existing.isPresent()) {
                throw new AuthorityException.State("run " + runId + " already has a record (phase " + existing.get().phase() + "); a run ID is never reused");
            }
            RunRecord rec = store.newRecord(runId, 1, RunPhase.ACTIVE, null);
            writeTransition(runId, rec, c, "start");
            ActiveRun active = new ActiveRun(this, runId, lock, 1);
            handedOver = true; // the lock and the lease now belong to the ActiveRun
            return active;
        } finally {
            if (!handedOver) {
                if (lock != null) {
                    lock.close();
                }
                leases.release();
            }
        }
    }

    /** See {@link RunAuthority#prepareImport}. */
    RunImport prepareImport(Envelope envelope, Cancellation c) throws AuthorityException {
        if (envelope == null) {
            throw new AuthorityException.Verification();
        }
        c.check("prepare import");
        Envelopes.Validated v;
        try {
            v = Envelopes.validateStrict(envelope, importable()).validated();
        } catch (EnvelopeRejectedException e) {
            if (e.rule() == EnvelopeRule.E_FORMAT) {
                // The format is public (not key-dependent): naming it tells nothing of the claim.
                throw new AuthorityException.UnsupportedFormat("envelope refused for import: " + e.getMessage().substring(
                        EnvelopeRule.E_FORMAT.id().length() + 2) + "; nothing was written");
            }
            throw new AuthorityException.Verification();
        }
        if (v.claimInput().lifecycle() != LifecycleStatus.SUSPENDED.lifecycleNumber()) {
            throw new AuthorityException.Verification();
        }
        // SECURITY: only a run ID this project can have started is imported; a wider one
        // (token(128) passes the envelope's structure) is refused before anything is looked up.
        RunId runId = RunId.parse(envelope.runId()).orElseThrow(AuthorityException.Verification::new);
        fences.check(runId);
        // The lease is in memory only: it creates nothing, and keeps close() from closing the
        // directory and zeroing the keys while they are in use below.
        leases.acquire();
        StableLock lock = null;
        AuthorityKey verifier = null;
        boolean handedOver = false;
        try {
            store.revalidate();
            // SECURITY: verify before any mutation: no lock file is created for an unauthenticated claim.
            byte[] firstRead = store.readRecordBytesForImport(runId);
            RunRecord record = verifyForImport(firstRead, runId, v);
            lock = store.lockRun(runId);
            fences.check(runId); // RACE: the owner's last write may have failed between our first check and the lock
            verifier = subkey(runId, record.runGeneration());
            c.check("prepare import " + runId);
            byte[] secondRead = store.readRecordBytesForImport(runId);
            if (!Arrays.equals(firstRead, secondRead)) {
                // RACE: the record changed between verification and locking; refuse, write nothing.
                throw new AuthorityException.Verification();
            }
            RunImport imp = new RunImport(this, runId, lock, record.runGeneration(), v.claim(), verifier);
            handedOver = true; // lock, lease and verifier now belong to the RunImport
            return imp;
        } finally {
            if (!handedOver) {
                if (lock != null) {
                    lock.close();
                }
                if (verifier != null) {
                    verifier.close();
                }
                leases.release();
            }
        }
    }

    private RunRecord verifyForImport(byte[] file, RunId runId, Envelopes.Validated v) throws AuthorityException {
        RunRecord rec = store.verifyRecord(file, runId);
        RunRecord.SnapshotBinding b = rec.snapshot();
        Claim claim = v.claim();
        ClaimInput in = v.claimInput();
        // SECURITY: the record binds the format it was signed in; an envelope of another format
        // is never its claim (the MAC input binds the format too: this refuses before the MAC).
        boolean match = rec.phase() == RunPhase.SUSPENDED && b != null
                && b.format() == in.snapshotFormat()
                && rec.keyGeneration() == claim.generation()
                && b.lastSequence() == in.lastSequence()
                && b.lifecycle() == in.lifecycle()
                && MessageDigest.isEqual(b.payloadSha256(), in.sha256())
                && MessageDigest.isEqual(b.authorityHmac(), claim.hmac())
                && MessageDigest.isEqual(identity.scopeId(), claim.scopeId());
        if (!match) {
            throw new AuthorityException.Verification();
        }
        try (AuthorityKey verifier = subkey(runId, rec.runGeneration())) {
            Envelopes.verify(v, verifier::verify);
        } catch (VerificationException e) {
            throw new AuthorityException.Verification();
        }
        return rec;
    }

    /** See {@link RunAuthority#abandon}. */
    RunRecord abandon(RunId runId, Cancellation c) throws AuthorityException {
        enterRunOperation("abandon", runId, c);
        StableLock lock = null;
        try {
            // SECURITY: a run with no record, or one that does not verify or is in a format not
            // accepted, gets no lock file (they are never unlinked, so any ID asked for would
            // otherwise leave one for good); the record is read again under the lock.
            if (store.readRecord(runId).isEmpty()) {
                throw new AuthorityException.State("run " + runId + " has no record");
            }
            lock = store.lockRun(runId);
            fences.check(runId);
            RunRecord rec = store.readRecord(runId).orElseThrow(
                    () -> new AuthorityException.State("run " + runId + " has no record"));
            if (rec.phase().isTerminal()) {
                throw new AuthorityException.State("run " + runId + " is " + rec.phase()
                        + "; only an ACTIVE, IMPORTING or SUSPENDED orphan can be abandoned");
            }
            RunRecord next = rec.with(RunPhase.CANCELLED, rec.runGeneration());
            writeTransition(runId, next, c, "abandon");
            return next;
        } finally {
            if (lock != null) {
                lock.close();
            }
            leases.release();
        }
    }

    /** See {@link RunAuthority#reissue}. */
    Envelope reissue(Snapshot snapshot) throws AuthorityException {
        RunId runId = new RunId(snapshot.runId()); // a decoded snapshot passed P-RUNID, the same rule
        requireSigning(snapshot.format());
        if (snapshot.status() != LifecycleStatus.SUSPENDED) {
            throw new AuthorityException.State("run " + runId + ": only a SUSPENDED snapshot is issued again; "
                    + "a terminal one ended the lease that signed it");
        }
        fences.check(runId);
        leases.acquire(); // keeps the directory and the keys open while they are used
        try {
            // RACE: read without the run lock. The owner may resume (ACTIVE at the next
            // generation) or end the run right after the read; the envelope then carries a claim
            // that no longer verifies, exactly as the one the owner was given. Nothing is
            // written, so nothing can be lost or doubled.
            RunRecord rec = store.readRecord(runId).orElseThrow(
                    () -> new AuthorityException.State("run " + runId + " has no record"));
            fences.check(runId); // RACE: a write may have failed (and fenced) while we read
            if (rec.phase() != RunPhase.SUSPENDED) {
                throw new AuthorityException.State("run " + runId + " is " + rec.phase()
                        + "; only a SUSPENDED run's envelope is issued again");
            }
            byte[] digest = HmacSha256.sha256(snapshot.canonicalBytes());
            ClaimInput input = new ClaimInput(snapshot.format(), runId.value(), snapshot.lastSequence(),
                    snapshot.status().lifecycleNumber(), digest);
            RunRecord.SnapshotBinding bound = rec.snapshot();
            // SECURITY: the signed record's binding first: only the payload it was signed for, in
            // the format it was signed in, is issued again, never a claim for anything else.
            if (bound.format() != input.snapshotFormat() || bound.lastSequence() != input.lastSequence() || bound.lifecycle() != input.lifecycle()
                    || !MessageDigest.isEqual(bound.payloadSha256(), digest)) {
                throw new AuthorityException.State("run " + runId + " is already suspended with a different snapshot");
            }
            Claim claim = signWithSubkey(runId, rec.runGeneration(), input);
            if (!MessageDigest.isEqual(claim.hmac(), bound.authorityHmac())) {
                throw new AuthorityException.Verification();
            }
            try {
                return Envelopes.seal(snapshot, in -> {
                    if (!input.equals(in)) {
                        throw new SigningException();
                    }
                    return claim;
                });
            } catch (SigningException e) {
                throw new AuthorityException.Unavailable("run " + runId + ": the envelope could not be built again");
            }
        } finally {
            leases.release();
        }
    }

    /**
     * The common entry of the run-ID operations: cancellation, fence, one lease (refused once
     * closing), then directory re-validation under it. The caller owns the lease and must release
     * it on every path that does not hand it over.
     */
    private void enterRunOperation(String what, RunId runId, Cancellation c) throws AuthorityException {
        c.check(what + " " + runId);
        fences.check(runId);
        leases.acquire(); // before revalidate: close() must not close the directory under it
        try {
            store.revalidate();
        } catch (AuthorityException | RuntimeException | Error e) {
            leases.release();
            throw e;
        }
    }

    /** The formats an envelope is imported in: accepted for verification and for import. */
    private java.util.Set<SnapshotFormat> importable() {
        java.util.EnumSet<SnapshotFormat> both = java.util.EnumSet.noneOf(SnapshotFormat.class);
        both.addAll(formats.importing());
        both.retainAll(formats.verification());
        return both;
    }

    // ---- used by ActiveRun and RunImport ------------------------------------------------------

    /**
     * Refuses a payload whose format the policy does not accept for signing, before any key is
     * touched or anything written.
     */
    void requireSigning(SnapshotFormat format) throws AuthorityException.UnsupportedFormat {
        if (!formats.acceptsForSigning(format)) {
            throw new AuthorityException.UnsupportedFormat("snapshot format \"" + format.wire()
                    + "\" is not accepted for signing here; nothing was written");
        }
    }

    /**
     * One durable transition: encode, re-validate the directory, final cancellation check, then
     * the writer. A failure the writer reports as one whose rename did not happen
     * ({@link DirectoryRefusedException#nothingWritten()}) is {@code unavailable} and retryable;
     * any other failure after the writer was invoked fences the run and is uncertain.
     */
    void writeTransition(RunId runId, RunRecord next, Cancellation c, String what) throws AuthorityException {
        byte[] file = store.sign(next);
        store.revalidate();
        c.check(what + " " + runId);
        try {
            store.writeSigned(runId, file);
        } catch (DirectoryRefusedException e) {
            if (e.nothingWritten()) {
                // The SPI guarantees the rename did not happen: the record on disk is the one
                // this transition started from, so there is nothing to fence, and the same call
                // works once the cause (a full disk, say) is gone.
                throw new AuthorityException.Unavailable(what + " " + runId + ": nothing written: " + e.detail()
                        + " (" + e.component() + ": " + e.category() + "); retry once the cause is gone");
            }
            throw uncertain(runId, next, what, e);
        } catch (RuntimeException | Error e) {
            throw uncertain(runId, next, what, e);
        }
    }

    /**
     * SECURITY: whatever failed at or after the rename (even an Error), the outcome is unknown:
     * fence the run and report uncertain, never a clean failure.
     */
    private AuthorityException.Uncertain uncertain(RunId runId, RunRecord attempted, String what, Throwable e) {
        fences.fence(runId, attempted);
        return new AuthorityException.Uncertain(what + " " + runId + ": the record write failed after it started ("
                + describe(e) + "); the outcome is unknown: do not retry automatically");
    }

    private static String describe(Throwable e) {
        return e instanceof DirectoryRefusedException d ? d.getMessage() : e.getClass().getSimpleName();
    }

    RunRecord newRecord(RunId runId, long generation, RunPhase phase, RunRecord.SnapshotBinding binding) {
        return store.newRecord(runId, generation, phase, binding);
    }

    /** Signs {@code input} with the run subkey at {@code runGeneration}. */
    Claim signWithSubkey(RunId runId, long runGeneration, ClaimInput input) {
        try (AuthorityKey key = subkey(runId, runGeneration)) {
            return key.sign(input);
        }
    }

    private AuthorityKey subkey(RunId runId, long runGeneration) {
        return RunSubkey.authorityFor(identity.masterKey(), identity.scopeId(), identity.generation(),
                runId.value(), runGeneration);
    }

    /** Ends a lease an {@link ActiveRun} or a {@link RunImport} was handed. */
    void releaseLease() {
        leases.release();
    }

    static boolean generationExhausted(long g) {
        return g == MAX_GENERATION;
    }
}
