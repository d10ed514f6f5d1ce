package spice.authority.core;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.FileNames;
import spice.authority.os.LockMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The OS-backed run authority (RFC 0007; wire-format.md c.2, d, e) over one bound
 * {@link SecureDirectory}.
 *
 * <p><b>Guarantees.</b>
 * <ul>
 *   <li>Exclusive ownership: a run is owned through its stable {@code flock} lock, held by an
 *       {@link ActiveRun} or a {@link RunImport}; a second owner in any process is {@code busy}.
 *   <li>Every durable transition is one atomic record write, preceded by a re-validation of the
 *       directory path and of the identity file (ARCHITECTURE.md "stricter" point 6): a moved,
 *       replaced or newly untrusted directory, or an {@code identity.key} that breaks the file
 *       rule or is no longer the file the key was read from, refuses the transition
 *       ({@code unavailable}) and nothing is written; it works again once restored.
 *   <li>Cancellation is checked on entry and right before the writer runs. A write that the
 *       directory reports as failed before its rename took effect
 *       ({@link DirectoryRefusedException#nothingWritten()}: ENOSPC, EIO at the temporary file's
 *       flush, a refused destination, a rename a local file system refused for want of space,
 *       ...) changed nothing: it is {@code unavailable}, retryable,
 *       and does not fence the run. Any other failure once the writer was invoked (the rename
 *       itself, the directory flush, any {@link RuntimeException} or {@link Error}) is
 *       {@code uncertain} and fences the run in this process (e.6); this holds for
 *       {@link #start} too, where the reference answers {@code unavailable} for every write
 *       failure.
 *   <li>{@link #open} removes the temporary files of interrupted record and identity writes
 *       ({@link #sweptTempFiles()}) before it returns, so never while one of its own transitions
 *       is in flight, and never one that another process may still be writing: nothing else.
 *   <li>{@link #listRecords()} lists the retained directory, never a path, and fails as a
 *       whole rather than return a partial list.
 *   <li>Import verifies the keyed claim against the signed record before it creates or locks
 *       anything, then locks and re-reads to prove the record unchanged (stricter point 4). Every
 *       authenticity failure is the one {@link AuthorityException.Verification}.
 *   <li>One run-ID rule ({@link RunId}, stricter point 3): a run is started, abandoned, inspected,
 *       re-issued or imported only under a valid {@link RunId}. A record written by another
 *       implementation under a wider ID (token(128), which the record format still reads) is
 *       foreign: it is never acted upon, and a listing counts it unreadable.
 *   <li>{@link #reissue} gives the envelope of a SUSPENDED run again for the identical snapshot,
 *       to any caller: it reads, signs in memory and writes nothing, takes no lock and no
 *       ownership.
 *   <li>{@link #close(Duration)} rejects new work, waits for outstanding leases, then closes the
 *       directory and zeroes the master key.
 * </ul>
 *
 * <p>The parts, each package-private: {@link Transitions} (the run transitions and the one durable
 * write), {@link RecordStore} (record read, write and MAC verification, run locks, the identity
 * proof), {@link RunFences}, {@link RecordLister}, {@link TempSweep} and {@link Leases} (leases and
 * shutdown). This class opens the authority, wires them and is the one entry point.
 */
public final class RunAuthority implements AutoCloseable {
    static final String IDENTITY_KEY = RecordStore.IDENTITY_KEY;
    static final String IDENTITY_LOCK = "identity.lock";

    private final AuthorityIdentity identity;
    private final RecordStore store;
    private final RunFences fences = new RunFences();
    private final Leases leases;
    private final Transitions transitions;
    private final RecordLister lister;
    private final int sweptTempFiles;
    private final FormatPolicy formats;
    private volatile Optional<Map<UnreadableReason, Integer>> unreadableAtOpen = Optional.empty();

    private RunAuthority(SecureDirectory dir, AuthorityIdentity identity, FileIdentity identityFile, int sweptTempFiles,
                         FormatPolicy formats) {
        this.identity = identity;
        this.formats = formats;
        this.store = new RecordStore(dir, identity, identityFile, formats);
        this.leases = new Leases(() -> {
            try {
                store.close();
            } finally {
                identity.close();
            }
        });
        this.transitions = new Transitions(identity, store, fences, leases, formats);
        this.lister = new RecordLister(store);
        this.sweptTempFiles = sweptTempFiles;
    }

    /**
     * Opens the authority in a bound directory: takes {@code identity.lock} (blocking), removes
     * the temporary files interrupted writes left behind (see {@link #sweptTempFiles()}), reads
     * {@code identity.key} or creates it once with fresh random scope and key, releases the lock.
     * The directory is owned by the returned authority from then on.
     *
     * @throws AuthorityException.Unavailable when the directory or the identity is unusable
     */
    public static RunAuthority open(SecureDirectory dir, SecureRandom random) throws AuthorityException.Unavailable {
        return open(dir, random, FormatPolicy.standard());
    }

    /**
     * {@link #open(SecureDirectory, SecureRandom)} under {@code formats}: the formats this
     * authority signs, verifies and imports (a deployment or a test may narrow
     * {@link FormatPolicy#standard()}, never widen it). A record in a format not accepted for
     * verification is unreadable ({@link UnreadableReason#UNSUPPORTED_FORMAT}).
     */
    public static RunAuthority open(SecureDirectory dir, SecureRandom random, FormatPolicy formats)
            throws AuthorityException.Unavailable {
        java.util.Objects.requireNonNull(formats, "formats");
        try {
            dir.revalidate();
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("authority directory refused: " + e.getMessage());
        }
        try (StableLock ignored = dir.lock(IDENTITY_LOCK, LockMode.BLOCKING)) {
            int swept = TempSweep.sweep(dir);
            IdentityLoader.Loaded loaded = IdentityLoader.load(dir, random);
            RunAuthority authority = new RunAuthority(dir, loaded.identity(), loaded.file(), swept, formats);
            authority.countUnreadableAtOpen();
            return authority;
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("identity lock refused: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            // The file's content breaks its format (length, version): name the file, as every refusal does.
            throw new AuthorityException.Unavailable(FileNames.printable(dir.path()) + "/" + IDENTITY_KEY
                    + ": identity file invalid (" + e.getMessage() + ")");
        }
    }

    // ---- public, secret-free facts ----------------------------------------------------------

    /** The public scope ID (hex). */
    public String scopeIdHex() {
        return identity.scopeIdHex();
    }

    public byte[] scopeId() {
        return identity.scopeId();
    }

    /** The authority key generation signed on the wire. */
    public long keyGeneration() {
        return identity.generation();
    }

    /**
     * The {@code run-*.state} entries that were not a record of this authority when it opened, by
     * reason (a format the policy refuses, a bad MAC, ...): counts only, for the one start-up log
     * line. Empty when the directory could not be listed then (the listing's own refusal says why
     * at the first {@link #listRecords()}).
     */
    public Optional<Map<UnreadableReason, Integer>> unreadableAtOpen() {
        return unreadableAtOpen;
    }

    private void countUnreadableAtOpen() {
        try {
            unreadableAtOpen = Optional.of(listRecords().unreadableByReason());
        } catch (AuthorityException e) {
            // Not listable now: open does not depend on it; every later listing reports its refusal.
        }
    }

    /** The format policy this authority signs, verifies and imports under. */
    public FormatPolicy formats() {
        return formats;
    }

    /** The bound directory path. */
    public String directory() {
        return store.directory().path();
    }

    /** Outstanding run and import leases. */
    public int outstandingLeases() {
        return leases.outstanding();
    }

    /** "open", "closing" or "closed". */
    public String state() {
        return leases.state();
    }

    /**
     * How many temporary files of interrupted writes {@link #open} removed (for a metric). Their
     * names are not kept: they carry nothing but a run's hashed name and random digits.
     */
    public int sweptTempFiles() {
        return sweptTempFiles;
    }

    /**
     * Whether a run is fenced as uncertain in this process: a write's outcome is unknown, so no
     * caller may act on the run until a restart of this process reads the truth from disk.
     */
    public boolean isFenced(RunId runId) {
        return fences.isFenced(runId);
    }

    /**
     * The record the write that fenced {@code runId} tried to write, while the run is fenced in
     * this process: for a run view when no record of the run can be read (a start whose rename
     * failed leaves none, or one that landed). It is what the run would be if that write took
     * effect, never a proof that it did; only a restart reads the truth.
     */
    public Optional<RunRecord> fencedWrite(RunId runId) {
        return fences.attempted(runId);
    }

    /**
     * {@link #fencedWrite} of every fenced run, by run ID: a listing shows a fenced run even when
     * no record of it is on disk.
     */
    public Map<RunId, RunRecord> fencedWrites() {
        return fences.all();
    }

    /** Test hook: whether the master key's storage has been zeroed. */
    boolean masterKeyZeroed() {
        return identity.masterKey().storageIsZeroed();
    }

    // ---- operations -------------------------------------------------------------------------

    /**
     * Start: durable ACTIVE at run generation 1; the returned {@link ActiveRun} owns the run.
     *
     * @throws AuthorityException.State when a record exists (any phase)
     * @throws AuthorityException.Busy when the run is owned elsewhere
     */
    public ActiveRun start(RunId runId, Cancellation c) throws AuthorityException {
        return transitions.start(runId, c);
    }

    /**
     * Prepares the import of a SUSPENDED envelope: structural and strict validation, then the
     * keyed claim against the signed record, all before anything is created or locked; then the
     * run lock, and a re-read proving the record unchanged. Nothing is written.
     *
     * @throws AuthorityException.Verification for every authenticity or record mismatch
     * @throws AuthorityException.Busy while the owner lives
     */
    public RunImport prepareImport(Envelope envelope, Cancellation c) throws AuthorityException {
        return transitions.prepareImport(envelope, c);
    }

    /**
     * Operator action (ARCHITECTURE.md "stricter" point 5): tombstones an ACTIVE, IMPORTING or
     * SUSPENDED orphan whose lock is free as CANCELLED at its run generation. Never automatic. A
     * live owner (a lease, including a SUSPENDED one, or an import transaction) holds the lock, so
     * its run is {@code busy}.
     *
     * @throws AuthorityException.Busy when a live owner holds the run
     * @throws AuthorityException.State when there is no record or it is a tombstone already
     */
    public RunRecord abandon(RunId runId, Cancellation c) throws AuthorityException {
        return transitions.abandon(runId, c);
    }

    /**
     * Reads and verifies a run's record without locking it (status queries).
     *
     * @return empty when the run has no record
     * @throws AuthorityException.Verification when the record does not verify
     * @throws AuthorityException.UnsupportedFormat when it verifies in a format not accepted
     */
    public Optional<RunRecord> inspect(RunId runId) throws AuthorityException {
        leases.acquire(); // keeps the directory and the record key open while they are used
        try {
            return store.readRecord(runId);
        } finally {
            leases.release();
        }
    }

    /**
     * Gives the envelope of a SUSPENDED run again, for the identical snapshot (a host whose
     * response was lost, or another host of the user once the owner died): reads the signed
     * record, requires it SUSPENDED and bound to exactly this payload (last sequence, lifecycle
     * and SHA-256), recomputes the claim with the run subkey of the record's generation and
     * proves it the HMAC the record binds, then builds the envelope. The claim is deterministic,
     * so the envelope is byte-identical to the one the owner was given.
     *
     * <p>Writes nothing, takes no run lock and no ownership: the owner, if any, keeps the run.
     *
     * @throws AuthorityException.State when {@code snapshot} is not SUSPENDED, the run has no
     *     record, is not SUSPENDED, or is suspended with a different snapshot
     * @throws AuthorityException.Verification when the record does not verify, or binds an HMAC
     *     this authority did not compute for it
     * @throws AuthorityException.Uncertain when the run is fenced in this process
     */
    public Envelope reissue(Snapshot snapshot) throws AuthorityException {
        return transitions.reissue(snapshot);
    }

    /**
     * Reads and verifies a state file found by listing the directory. The record must name the run
     * whose hashed file name it sits under, so a renamed file cannot pose as another run.
     *
     * @return empty when the file vanished
     * @throws AuthorityException.Verification when unverifiable, foreign or misnamed
     * @throws AuthorityException.UnsupportedFormat when it verifies in a format not accepted
     */
    public Optional<RunRecord> readStateFile(String fileName) throws AuthorityException {
        if (!fileName.startsWith("run-") || !fileName.endsWith(".state") || fileName.length() != 4 + 64 + 6) {
            throw new AuthorityException.Verification();
        }
        leases.acquire(); // keeps the directory and the record key open while they are used
        try {
            return lister.readStateFile(fileName);
        } finally {
            leases.release();
        }
    }

    /**
     * Whether the store can be used, for a readiness probe: the directory (and the identity file)
     * revalidate, the identity file reads through the retained directory, the retained directory
     * lists, and it takes a durable write ({@link SecureDirectory#probeWrite}: an empty temporary
     * file of {@code identity.key}, created, flushed and removed; the sweep of {@link #open}
     * removes one a crash left). Status calls and listings alone prove little: after an ext4
     * shutdown, an emergency read-only remount or on a device that fails writes, the kernel still
     * answers them from its caches; opening a file, or committing one, fails. Reads no record;
     * the key read is zeroed at once and appears in no message. A directory bound for validation
     * only is not written to.
     *
     * @throws AuthorityException.Unavailable with the reason when it does not
     * @throws AuthorityException.Closed while closing
     */
    public void checkStore() throws AuthorityException {
        leases.acquire();
        try {
            store.check();
        } finally {
            leases.release();
        }
    }

    /**
     * Lists the records of the directory: every {@code run-*.state} entry of the retained
     * directory (never listed by path) is read and verified as {@link #readStateFile} does.
     * Entries that are not a record of this authority (unverifiable, in a format not accepted,
     * foreign, misnamed, a symbolic link, the wrong type, owner, mode or size) are counted by
     * {@link UnreadableReason}, not listed; entries gone
     * since the listing are skipped; other files are ignored.
     *
     * @return the verified records by run ID, and the count of the others
     * @throws AuthorityException.Unavailable when the directory cannot be listed, or a record
     *     cannot be read for an I/O error: never a partial listing
     */
    public RecordListing listRecords() throws AuthorityException {
        leases.acquire(); // keeps the directory and the record key open while they are used
        try {
            return lister.list();
        } finally {
            leases.release();
        }
    }

    // ---- shutdown ---------------------------------------------------------------------------

    /**
     * Rejects new work, waits up to {@code wait} for outstanding leases, then closes the directory
     * and zeroes the master key. When leases remain, throws {@code busy}; the authority stays
     * closing and the last lease to end completes the shutdown.
     */
    public void close(Duration wait) throws AuthorityException.Busy {
        leases.close(wait);
    }

    /** {@link #close(Duration)} with no wait; leases still outstanding keep the authority closing. */
    @Override
    public void close() {
        try {
            close(Duration.ZERO);
        } catch (AuthorityException.Busy e) {
            // The last lease completes the shutdown.
        }
    }

    @Override
    public String toString() {
        return "RunAuthority[directory=" + directory() + ", scope_id=" + scopeIdHex() + ", generation="
                + Long.toUnsignedString(keyGeneration()) + ", state=" + state() + "]";
    }
}
