package spice.authority.core;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.FileNames;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;
import spice.authority.os.UnsupportedPlatformException;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.envelope.SigningException;
import spice.authority.snapshot.payload.LifecycleStatus;
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
 */
public final class RunAuthority implements AutoCloseable {
    static final String IDENTITY_KEY = AuthorityIdentity.FILE_NAME;
    static final String IDENTITY_LOCK = "identity.lock";
    private static final long MAX_GENERATION = -1L; // 2^64-1, unsigned
    /** A record file name as {@link RecordCodec#fileStem} makes them (wire-format d.1). */
    private static final Pattern RECORD_FILE = Pattern.compile("run-[0-9a-f]{64}\\.state");
    private static final System.Logger LOG = System.getLogger(RunAuthority.class.getName());

    private final SecureDirectory dir;
    private final AuthorityIdentity identity;
    /** The file {@code identity.key} named when its key was read or created (device and inode). */
    private final FileIdentity identityFile;
    private final HmacSha256 recordMac;
    private final int sweptTempFiles;
    /** Runs fenced in this process, each with the record the write that fenced it tried to write. */
    private final Map<String, RunRecord> fenced = new ConcurrentHashMap<>();
    private final Object stateLock = new Object();
    private int leases;
    private boolean closing;
    private boolean shutDown;

    private RunAuthority(SecureDirectory dir, AuthorityIdentity identity, FileIdentity identityFile, int sweptTempFiles) {
        this.dir = dir;
        this.identity = identity;
        this.identityFile = identityFile;
        this.recordMac = new HmacSha256(identity.masterKey());
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
        try {
            dir.revalidate();
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("authority directory refused: " + e.getMessage());
        }
        try (StableLock ignored = dir.lock(IDENTITY_LOCK, LockMode.BLOCKING)) {
            int swept = sweepTemporaries(dir);
            FileIdentity seen;
            try {
                seen = checkIdentityFile(dir, null);
            } catch (DirectoryRefusedException e) {
                if (e.category() != DirectoryRefusedException.Category.MISSING) {
                    throw new AuthorityException.Unavailable("identity file refused: " + e.getMessage());
                }
                seen = null;
            }
            AuthorityIdentity id;
            if (seen == null) {
                id = AuthorityIdentity.generate(random);
                byte[] encoded = id.encode();
                try {
                    dir.writeAtomically(IDENTITY_KEY, encoded);
                } catch (DirectoryRefusedException | RuntimeException e) {
                    id.close();
                    throw new AuthorityException.Unavailable("could not create the identity file: " + e.getMessage());
                } finally {
                    java.util.Arrays.fill(encoded, (byte) 0);
                }
            } else {
                byte[] file;
                try {
                    file = dir.read(IDENTITY_KEY, AuthorityIdentity.FILE_LENGTH);
                } catch (DirectoryRefusedException e) {
                    throw new AuthorityException.Unavailable("identity file refused: " + e.getMessage());
                }
                try {
                    id = AuthorityIdentity.parse(file);
                } finally {
                    java.util.Arrays.fill(file, (byte) 0);
                }
            }
            // RACE: the name is checked again after the read (or the write), and must name the
            // file checked before the read; it is the file every later transition must still
            // find. A file swapped in and back out between the two checks goes unseen: only the
            // owner of the 0700 directory (the user this authority runs as) or root can rename
            // files in it, and either could as well rewrite the key itself.
            FileIdentity opened;
            try {
                opened = checkIdentityFile(dir, seen);
            } catch (DirectoryRefusedException | RuntimeException e) {
                id.close();
                throw new AuthorityException.Unavailable("identity file refused: " + e.getMessage());
            }
            return new RunAuthority(dir, id, opened, swept);
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("identity lock refused: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            // The file's content breaks its format (length, version): name the file, as every refusal does.
            throw new AuthorityException.Unavailable(FileNames.printable(dir.path()) + "/" + IDENTITY_KEY
                    + ": identity file invalid (" + e.getMessage() + ")");
        }
    }

    /**
     * Removes every temporary file of an interrupted write of {@code identity.key} or of a record
     * ({@link FileNames#temporaryTarget}: {@code .identity.key.<24 hex>.tmp},
     * {@code .run-<64 hex>.state.<24 hex>.tmp}), descriptor-relatively. Nothing else is touched:
     * not lock files, not state files, not near misses, not temporaries of other targets. A
     * failure is logged and leaves the file; it never stops the open (nothing reads these files).
     * Called under {@code identity.lock}; a directory bound for validation only is left as it is.
     *
     * @return how many files were removed
     */
    private static int sweepTemporaries(SecureDirectory dir) {
        if (dir.openMode() == OpenMode.VALIDATE_ONLY) {
            return 0;
        }
        List<String> names;
        try {
            names = dir.list();
        } catch (DirectoryRefusedException | UnsupportedPlatformException e) {
            LOG.log(System.Logger.Level.WARNING, "leftover temporary files not swept: {0}", e.getMessage());
            return 0;
        }
        int removed = 0;
        for (String name : names) {
            Optional<String> target = FileNames.temporaryTarget(name);
            if (target.isEmpty()) {
                continue;
            }
            try {
                if (target.get().equals(IDENTITY_KEY)) {
                    // RACE: identity.key is written only under identity.lock (here and in the
                    // reference), and the caller holds it: no write of it is in flight.
                    removed += dir.removeTemporary(name) ? 1 : 0;
                } else if (RECORD_FILE.matcher(target.get()).matches()) {
                    removed += removeRecordTemporary(dir, name, target.get()) ? 1 : 0;
                }
            } catch (DirectoryRefusedException e) {
                LOG.log(System.Logger.Level.WARNING, "leftover temporary file kept: {0}", e.getMessage());
            }
        }
        if (removed > 0) {
            LOG.log(System.Logger.Level.INFO, "removed {0} leftover temporary file(s) of interrupted writes in {1}",
                    removed, FileNames.printable(dir.path()));
        }
        return removed;
    }

    /**
     * Removes the temporary file of an interrupted write of record {@code target}, unless a
     * write of it may be in flight.
     *
     * <p>RACE: every writer of a record (this authority, another process sharing the directory,
     * the reference) holds the run's stable lock while it writes, and lock files are never
     * removed. So when the lock file does not exist no writer has ever held it and the temporary
     * is no write's in flight; when it exists, the temporary is removed only while we hold the
     * lock ourselves (non-blocking); a live owner ({@code busy}) keeps it.
     *
     * @return whether the file was removed
     */
    private static boolean removeRecordTemporary(SecureDirectory dir, String temp, String target)
            throws DirectoryRefusedException {
        String lockName = target.substring(0, target.length() - ".state".length()) + FileNames.LOCK_SUFFIX;
        try {
            dir.checkFile(lockName);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                return dir.removeTemporary(temp);
            }
            throw e;
        }
        StableLock lock;
        try {
            lock = dir.lock(lockName, LockMode.NON_BLOCKING);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.BUSY) {
                return false;
            }
            throw e;
        }
        try (lock) {
            return dir.removeTemporary(temp);
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

    /** The bound directory path. */
    public String directory() {
        return dir.path();
    }

    /** Outstanding run and import leases. */
    public int outstandingLeases() {
        synchronized (stateLock) {
            return leases;
        }
    }

    /** "open", "closing" or "closed". */
    public String state() {
        synchronized (stateLock) {
            return shutDown ? "closed" : closing ? "closing" : "open";
        }
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
    public boolean isFenced(String runId) {
        return fenced.containsKey(runId);
    }

    /**
     * The record the write that fenced {@code runId} tried to write, while the run is fenced in
     * this process: for a run view when no record of the run can be read (a start whose rename
     * failed leaves none, or one that landed). It is what the run would be if that write took
     * effect, never a proof that it did; only a restart reads the truth.
     */
    public Optional<RunRecord> fencedWrite(String runId) {
        return Optional.ofNullable(fenced.get(runId));
    }

    /**
     * {@link #fencedWrite} of every fenced run, by run ID: a listing shows a fenced run even when
     * no record of it is on disk.
     */
    public Map<String, RunRecord> fencedWrites() {
        return Map.copyOf(fenced);
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
    public ActiveRun start(RunId id, Cancellation c) throws AuthorityException {
        String runId = id.value();
        String stem = enterRunOperation("start", id, c);
        StableLock lock = null;
        boolean handedOver = false;
        try {
            lock = lockRun(stem, runId);
            checkFence(runId); // RACE: a write may have failed (and fenced) while we waited for the lock
            Optional<RunRecord> existing = readRecord(stem, runId);
            if (existing.isPresent()) {
                throw new AuthorityException.State("run " + runId + " already has a record (phase " + existing.get().phase() + "); a run ID is never reused");
            }
            RunRecord rec = new RunRecord(scopeIdHex(), keyGeneration(), runId, 1, Phase.ACTIVE, null);
            writeTransition(runId, rec, c, "start");
            ActiveRun active = new ActiveRun(this, runId, lock, 1);
            handedOver = true; // the lock and the lease now belong to the ActiveRun
            return active;
        } finally {
            if (!handedOver) {
                if (lock != null) {
                    lock.close();
                }
                releaseLease();
            }
        }
    }

    /**
     * {@link #start(RunId, Cancellation)} for a run ID given as text.
     *
     * @throws AuthorityException.Configuration when {@code runId} breaks the {@link RunId} rule
     */
    public ActiveRun start(String runId, Cancellation c) throws AuthorityException {
        return start(runIdOf(runId), c);
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
        if (envelope == null) {
            throw new AuthorityException.Verification();
        }
        c.check("prepare import");
        Envelopes.Validated v;
        try {
            v = Envelopes.validateStrict(envelope).validated();
        } catch (EnvelopeRejectedException e) {
            throw new AuthorityException.Verification();
        }
        if (v.claimInput().lifecycle() != LifecycleStatus.SUSPENDED.lifecycleNumber()) {
            throw new AuthorityException.Verification();
        }
        String runId = envelope.runId();
        // SECURITY: only a run ID this project can have started is imported; a wider one
        // (token(128) passes the envelope's structure) is refused before anything is looked up.
        if (!RunId.isValid(runId)) {
            throw new AuthorityException.Verification();
        }
        checkFence(runId);
        String stem = RecordCodec.fileStem(runId);
        // The lease is in memory only: it creates nothing, and keeps close() from closing the
        // directory and zeroing the keys while they are in use below.
        acquireLease();
        StableLock lock = null;
        AuthorityKey verifier = null;
        boolean handedOver = false;
        try {
            revalidate();
            // SECURITY: verify before any mutation: no lock file is created for an unauthenticated claim.
            byte[] firstRead = readRecordBytesForImport(stem);
            RunRecord record = verifyForImport(firstRead, runId, v);
            lock = lockRun(stem, runId);
            checkFence(runId); // RACE: the owner's last write may have failed between our first check and the lock
            verifier = RunSubkey.authorityFor(identity.masterKey(), identity.scopeId(), keyGeneration(),
                    runId, record.runGeneration());
            c.check("prepare import " + runId);
            byte[] secondRead = readRecordBytesForImport(stem);
            if (!java.util.Arrays.equals(firstRead, secondRead)) {
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
                releaseLease();
            }
        }
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
    public RunRecord abandon(RunId id, Cancellation c) throws AuthorityException {
        String runId = id.value();
        String stem = enterRunOperation("abandon", id, c);
        StableLock lock = null;
        try {
            // SECURITY: a run with no record gets no lock file (they are never unlinked, so any ID
            // asked for would otherwise leave one for good); the record is read again under the lock.
            if (!hasRecordFile(stem)) {
                throw new AuthorityException.State("run " + runId + " has no record");
            }
            lock = lockRun(stem, runId);
            checkFence(runId);
            RunRecord rec = readRecord(stem, runId).orElseThrow(
                    () -> new AuthorityException.State("run " + runId + " has no record"));
            if (rec.phase().isTerminal()) {
                throw new AuthorityException.State("run " + runId + " is " + rec.phase()
                        + "; only an ACTIVE, IMPORTING or SUSPENDED orphan can be abandoned");
            }
            RunRecord next = rec.with(Phase.CANCELLED, rec.runGeneration());
            writeTransition(runId, next, c, "abandon");
            return next;
        } finally {
            if (lock != null) {
                lock.close();
            }
            releaseLease();
        }
    }

    /** Whether the run's record file is there, or may be (anything but a proven absence). */
    private boolean hasRecordFile(String stem) {
        try {
            dir.checkFile(stem + ".state");
            return true;
        } catch (DirectoryRefusedException e) {
            return e.category() != DirectoryRefusedException.Category.MISSING;
        }
    }

    /**
     * {@link #abandon(RunId, Cancellation)} for a run ID given as text.
     *
     * @throws AuthorityException.Configuration when {@code runId} breaks the {@link RunId} rule
     */
    public RunRecord abandon(String runId, Cancellation c) throws AuthorityException {
        return abandon(runIdOf(runId), c);
    }

    /**
     * Reads and verifies a run's record without locking it (status queries).
     *
     * @return empty when the run has no record
     * @throws AuthorityException.Verification when the record does not verify
     */
    public Optional<RunRecord> inspect(RunId id) throws AuthorityException {
        acquireLease(); // keeps the directory and the record key open while they are used
        try {
            return readRecord(RecordCodec.fileStem(id.value()), id.value());
        } finally {
            releaseLease();
        }
    }

    /** {@link #inspect(RunId)} for a run ID given as text; empty when it breaks the rule. */
    public Optional<RunRecord> inspect(String runId) throws AuthorityException {
        Optional<RunId> id = RunId.parse(runId);
        return id.isEmpty() ? Optional.empty() : inspect(id.get());
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
        RunId id = new RunId(snapshot.runId()); // a decoded snapshot passed P-RUNID, the same rule
        String runId = id.value();
        if (snapshot.status() != LifecycleStatus.SUSPENDED) {
            throw new AuthorityException.State("run " + runId + ": only a SUSPENDED snapshot is issued again; "
                    + "a terminal one ended the lease that signed it");
        }
        checkFence(runId);
        acquireLease(); // keeps the directory and the keys open while they are used
        try {
            // RACE: read without the run lock. The owner may resume (ACTIVE at the next
            // generation) or end the run right after the read; the envelope then carries a claim
            // that no longer verifies, exactly as the one the owner was given. Nothing is
            // written, so nothing can be lost or doubled.
            RunRecord rec = readRecord(RecordCodec.fileStem(runId), runId).orElseThrow(
                    () -> new AuthorityException.State("run " + runId + " has no record"));
            checkFence(runId); // RACE: a write may have failed (and fenced) while we read
            if (rec.phase() != Phase.SUSPENDED) {
                throw new AuthorityException.State("run " + runId + " is " + rec.phase()
                        + "; only a SUSPENDED run's envelope is issued again");
            }
            byte[] digest = HmacSha256.sha256(snapshot.canonicalBytes());
            ClaimInput input = new ClaimInput(Snapshot.FORMAT, runId, snapshot.lastSequence(),
                    snapshot.status().lifecycleNumber(), digest);
            RunRecord.SnapshotBinding bound = rec.snapshot();
            // SECURITY: the signed record's binding first: only the payload it was signed for is
            // issued again, never a claim for anything else.
            if (bound.lastSequence() != input.lastSequence() || bound.lifecycle() != input.lifecycle()
                    || !java.security.MessageDigest.isEqual(bound.payloadSha256(), digest)) {
                throw new AuthorityException.State("run " + runId + " is already suspended with a different snapshot");
            }
            Claim claim = signWithSubkey(runId, rec.runGeneration(), input);
            if (!java.security.MessageDigest.isEqual(claim.hmac(), bound.authorityHmac())) {
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
            releaseLease();
        }
    }

    /**
     * Reads and verifies a state file found by listing the directory. The record must name the run
     * whose hashed file name it sits under, so a renamed file cannot pose as another run.
     *
     * @return empty when the file vanished
     * @throws AuthorityException.Verification when unverifiable, foreign or misnamed
     */
    public Optional<RunRecord> readStateFile(String fileName) throws AuthorityException {
        if (!fileName.startsWith("run-") || !fileName.endsWith(".state") || fileName.length() != 4 + 64 + 6) {
            throw new AuthorityException.Verification();
        }
        acquireLease(); // keeps the directory and the record key open while they are used
        try {
            return readStateFileLeased(fileName);
        } finally {
            releaseLease();
        }
    }

    private Optional<RunRecord> readStateFileLeased(String fileName) throws AuthorityException {
        byte[] file;
        try {
            file = dir.read(fileName, RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                return Optional.empty();
            }
            throw new AuthorityException.Unavailable("record refused: " + e.getMessage());
        }
        RunRecord rec = verifyMac(file);
        if (!(RecordCodec.fileStem(rec.runId()) + ".state").equals(fileName)) {
            throw new AuthorityException.Verification();
        }
        return Optional.of(requireOurs(rec, rec.runId()));
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
        acquireLease();
        try {
            revalidate();
            byte[] key = null;
            try {
                key = dir.read(IDENTITY_KEY, AuthorityIdentity.FILE_LENGTH);
            } catch (DirectoryRefusedException e) {
                throw new AuthorityException.Unavailable("identity file unreadable: " + e.getMessage());
            } finally {
                if (key != null) {
                    java.util.Arrays.fill(key, (byte) 0); // SECURITY: read to prove the file reads, never kept
                }
            }
            try {
                dir.list();
            } catch (DirectoryRefusedException | UnsupportedPlatformException e) {
                throw new AuthorityException.Unavailable("authority directory cannot be listed: " + e.getMessage());
            }
            if (dir.openMode() != OpenMode.VALIDATE_ONLY) {
                try {
                    // A temporary of identity.key, not of a record: it can never pass for a run's
                    // write, and one a crash left is removed by the sweep under identity.lock.
                    dir.probeWrite(IDENTITY_KEY);
                } catch (DirectoryRefusedException e) {
                    throw new AuthorityException.Unavailable("authority directory takes no writes: " + e.getMessage());
                }
            }
        } finally {
            releaseLease();
        }
    }

    /**
     * Lists the records of the directory: every {@code run-*.state} entry of the retained
     * directory (never listed by path) is read and verified as {@link #readStateFile} does.
     * Entries that are not a record of this authority (unverifiable, foreign, misnamed, a
     * symbolic link, the wrong type, owner, mode or size) are counted, not listed; entries gone
     * since the listing are skipped; other files are ignored.
     *
     * @return the verified records by run ID, and the count of the others
     * @throws AuthorityException.Unavailable when the directory cannot be listed, or a record
     *     cannot be read for an I/O error: never a partial listing
     */
    public RecordListing listRecords() throws AuthorityException {
        acquireLease(); // keeps the directory and the record key open while they are used
        try {
            List<String> names;
            try {
                names = dir.list();
            } catch (DirectoryRefusedException | UnsupportedPlatformException e) {
                throw new AuthorityException.Unavailable("authority directory cannot be listed: " + e.getMessage());
            }
            List<RunRecord> records = new ArrayList<>();
            int unreadable = 0;
            for (String name : names) {
                if (!name.startsWith("run-") || !name.endsWith(".state")) {
                    continue;
                }
                try {
                    listedRecord(name).ifPresent(records::add);
                } catch (AuthorityException.Verification e) {
                    unreadable++;
                }
            }
            records.sort(Comparator.comparing(RunRecord::runId));
            return new RecordListing(records, unreadable);
        } finally {
            releaseLease();
        }
    }

    /**
     * One listed record.
     *
     * @return empty when the file is gone since the listing
     * @throws AuthorityException.Verification when the entry is not a record of this authority
     * @throws AuthorityException.Unavailable for an I/O error
     */
    private Optional<RunRecord> listedRecord(String fileName) throws AuthorityException {
        if (!RECORD_FILE.matcher(fileName).matches()) {
            throw new AuthorityException.Verification();
        }
        byte[] file;
        try {
            file = dir.read(fileName, RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            switch (e.category()) {
                case MISSING -> {
                    return Optional.empty(); // RACE: removed since the listing
                }
                case IO -> throw new AuthorityException.Unavailable("record cannot be read: " + e.getMessage());
                default -> throw new AuthorityException.Verification(); // not a record file of ours
            }
        }
        RunRecord rec = verifyMac(file);
        if (!(RecordCodec.fileStem(rec.runId()) + ".state").equals(fileName)) {
            throw new AuthorityException.Verification();
        }
        return Optional.of(requireOurs(rec, rec.runId()));
    }

    // ---- shutdown ---------------------------------------------------------------------------

    /**
     * Rejects new work, waits up to {@code wait} for outstanding leases, then closes the directory
     * and zeroes the master key. When leases remain, throws {@code busy}; the authority stays
     * closing and the last lease to end completes the shutdown.
     */
    public void close(Duration wait) throws AuthorityException.Busy {
        Cancellation deadline = Cancellation.withTimeout(wait); // any length, no overflow
        synchronized (stateLock) {
            closing = true;
            while (leases > 0 && !shutDown) {
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    throw new AuthorityException.Busy("authority closing: " + leases + " run or import lease(s) still outstanding");
                }
                try {
                    stateLock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AuthorityException.Busy("authority closing: interrupted while " + leases + " lease(s) remain");
                }
            }
            shutdownLocked();
        }
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

    private void shutdownLocked() {
        if (!shutDown) {
            shutDown = true;
            try {
                dir.close();
            } finally {
                recordMac.destroy();
                identity.close();
                stateLock.notifyAll();
            }
        }
    }

    // ---- internals used by ActiveRun and RunImport -------------------------------------------

    /**
     * The common entry of the run-ID operations: argument, cancellation, fence, one lease (refused
     * once closing), then directory re-validation under it. Returns the run's file stem; the caller owns the
     * lease and must release it on every path that does not hand it over.
     */
    private String enterRunOperation(String what, RunId id, Cancellation c) throws AuthorityException {
        String runId = id.value();
        c.check(what + " " + runId);
        checkFence(runId);
        acquireLease(); // before revalidate: close() must not close the directory under it
        try {
            revalidate();
        } catch (AuthorityException | RuntimeException | Error e) {
            releaseLease();
            throw e;
        }
        return RecordCodec.fileStem(runId);
    }

    /** The text as a {@link RunId}, or the refusal that names the rule (never the text). */
    private static RunId runIdOf(String runId) throws AuthorityException.Configuration {
        return RunId.parse(runId).orElseThrow(() -> new AuthorityException.Configuration(RunId.RULE));
    }

    private void checkFence(String runId) throws AuthorityException.Uncertain {
        if (fenced.containsKey(runId)) {
            throw new AuthorityException.Uncertain("run " + runId + " is uncertain in this process: an earlier write's outcome is unknown; "
                    + "inspect it after a restart, never retry automatically");
        }
    }

    /** Fences {@code runId}; {@code attempted} is the record the uncertain write tried to write (the first one is kept). */
    void fence(String runId, RunRecord attempted) {
        fenced.putIfAbsent(runId, attempted);
    }

    void acquireLease() throws AuthorityException.Closed {
        synchronized (stateLock) {
            if (closing || shutDown) {
                throw new AuthorityException.Closed("run authority is " + (shutDown ? "closed" : "closing") + "; no new work is accepted");
            }
            leases++;
        }
    }

    void releaseLease() {
        synchronized (stateLock) {
            leases--;
            if (leases == 0) {
                if (closing) {
                    shutdownLocked();
                }
                stateLock.notifyAll();
            }
        }
    }

    /**
     * Identity proof before a durable transition (ARCHITECTURE.md "stricter" point 6): the path
     * still leads to the retained directory, and {@code identity.key} in it is still the file the
     * key was read from and still passes the file rule. Reads no key and writes nothing.
     */
    void revalidate() throws AuthorityException.Unavailable {
        try {
            dir.revalidate();
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("authority directory refused, nothing written: " + e.getMessage());
        } catch (IllegalStateException e) {
            throw new AuthorityException.Unavailable("authority directory closed");
        }
        try {
            // SECURITY: a loosened (mode, owner), hard-linked or replaced identity file refuses
            // every transition until it is restored, as `authority check` refuses the directory.
            checkIdentityFile(dir, identityFile);
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("identity file refused, nothing written: " + e.getMessage());
        } catch (IllegalStateException e) {
            throw new AuthorityException.Unavailable("authority directory closed");
        }
    }

    /**
     * Checks {@code identity.key} in place by the directory's one file rule and, when
     * {@code expected} is given, proves it the same file (device and inode). Reads nothing.
     *
     * @return the identity of the file the name names now
     * @throws DirectoryRefusedException the file rule it breaks, or
     *     {@link DirectoryRefusedException.Category#IDENTITY} when it is another file
     */
    private static FileIdentity checkIdentityFile(SecureDirectory dir, FileIdentity expected) throws DirectoryRefusedException {
        FileIdentity now = dir.checkFile(IDENTITY_KEY);
        if (expected != null && !now.equals(expected)) {
            throw new DirectoryRefusedException(DirectoryRefusedException.Category.IDENTITY,
                    FileNames.printable(dir.path()) + "/" + IDENTITY_KEY,
                    "is file " + now + ", not " + expected + " that the authority key was read from");
        }
        return now;
    }

    private StableLock lockRun(String stem, String runId) throws AuthorityException {
        try {
            return dir.lock(stem + ".lock", LockMode.NON_BLOCKING);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.BUSY) {
                throw new AuthorityException.Busy("run " + runId + " is owned by a live process");
            }
            throw new AuthorityException.Unavailable("run " + runId + ": lock refused: " + e.getMessage());
        }
    }

    /**
     * Reads and verifies the record of {@code runId}.
     *
     * @return empty when the state file is absent
     * @throws AuthorityException.Verification when present but unverifiable or foreign
     * @throws AuthorityException.Unavailable for any other read failure
     */
    Optional<RunRecord> readRecord(String stem, String runId) throws AuthorityException {
        byte[] file;
        try {
            file = dir.read(stem + ".state", RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                return Optional.empty();
            }
            throw new AuthorityException.Unavailable("run " + runId + ": record refused: " + e.getMessage());
        }
        return Optional.of(verifyRecord(file, runId));
    }

    private RunRecord verifyRecord(byte[] file, String runId) throws AuthorityException.Verification {
        return requireOurs(verifyMac(file), runId);
    }

    /** The record of a file whose MAC verifies under this authority's record key. */
    private RunRecord verifyMac(byte[] file) throws AuthorityException.Verification {
        try {
            return RecordCodec.verifyFile(file, recordMac);
        } catch (RecordCodec.Unverifiable e) {
            throw new AuthorityException.Verification();
        }
    }

    /**
     * The record, when it belongs to this scope and key generation, names {@code runId}, and its
     * run ID is a {@link RunId}: a record under a wider ID (another implementation's) is foreign.
     */
    private RunRecord requireOurs(RunRecord rec, String runId) throws AuthorityException.Verification {
        if (!rec.scopeIdHex().equals(scopeIdHex()) || rec.keyGeneration() != keyGeneration() || !rec.runId().equals(runId)
                || !RunId.isValid(rec.runId())) {
            throw new AuthorityException.Verification();
        }
        return rec;
    }

    /**
     * The record's bytes for an import. A record that is absent or breaks the file rules is a
     * verification failure, as in the reference (wire-format Appendix C). Stricter than the
     * reference: a read the operating system failed ({@code IO}: EIO, EMFILE, ENFILE, ...) proves
     * nothing about the envelope; prepare has written nothing, so it is {@code unavailable} and the
     * same import may be tried again. (A replaced directory is refused before, by
     * {@link #revalidate()}, as {@code unavailable} too.)
     */
    private byte[] readRecordBytesForImport(String stem) throws AuthorityException.Verification, AuthorityException.Unavailable {
        try {
            return dir.read(stem + ".state", RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.IO) {
                throw new AuthorityException.Unavailable("reading the record of an import failed (" + e.category()
                        + "); nothing was written, the import may be tried again");
            }
            throw new AuthorityException.Verification();
        } catch (RuntimeException e) {
            throw new AuthorityException.Verification();
        }
    }

    private RunRecord verifyForImport(byte[] file, String runId, Envelopes.Validated v) throws AuthorityException.Verification {
        RunRecord rec = verifyRecord(file, runId);
        RunRecord.SnapshotBinding b = rec.snapshot();
        Claim claim = v.claim();
        ClaimInput in = v.claimInput();
        boolean match = rec.phase() == Phase.SUSPENDED && b != null
                && rec.keyGeneration() == claim.generation()
                && b.lastSequence() == in.lastSequence()
                && b.lifecycle() == in.lifecycle()
                && java.security.MessageDigest.isEqual(b.payloadSha256(), in.sha256())
                && java.security.MessageDigest.isEqual(b.authorityHmac(), claim.hmac())
                && java.security.MessageDigest.isEqual(identity.scopeId(), claim.scopeId());
        if (!match) {
            throw new AuthorityException.Verification();
        }
        try (AuthorityKey verifier = RunSubkey.authorityFor(identity.masterKey(), identity.scopeId(), keyGeneration(),
                runId, rec.runGeneration())) {
            Envelopes.verify(v, verifier::verify);
        } catch (VerificationException e) {
            throw new AuthorityException.Verification();
        }
        return rec;
    }

    /** Signs {@code input} with the run subkey at {@code runGeneration}. */
    Claim signWithSubkey(String runId, long runGeneration, ClaimInput input) {
        try (AuthorityKey key = RunSubkey.authorityFor(identity.masterKey(), identity.scopeId(), keyGeneration(),
                runId, runGeneration)) {
            return key.sign(input);
        }
    }

    /**
     * One durable transition: encode, re-validate the directory, final cancellation check, then
     * the writer. A failure the writer reports as one whose rename did not happen
     * ({@link DirectoryRefusedException#nothingWritten()}) is {@code unavailable} and retryable;
     * any other failure after the writer was invoked fences the run and is uncertain.
     */
    void writeTransition(String runId, RunRecord next, Cancellation c, String what) throws AuthorityException {
        byte[] file = RecordCodec.signedFile(next, recordMac);
        revalidate();
        c.check(what + " " + runId);
        try {
            dir.writeAtomically(RecordCodec.fileStem(runId) + ".state", file);
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
    private AuthorityException.Uncertain uncertain(String runId, RunRecord attempted, String what, Throwable e) {
        fence(runId, attempted);
        return new AuthorityException.Uncertain(what + " " + runId + ": the record write failed after it started ("
                + describe(e) + "); the outcome is unknown: do not retry automatically");
    }

    RunRecord newRecord(String runId, long generation, Phase phase, RunRecord.SnapshotBinding binding) {
        return new RunRecord(scopeIdHex(), keyGeneration(), runId, generation, phase, binding);
    }

    static boolean generationExhausted(long g) {
        return g == MAX_GENERATION;
    }

    private static String describe(Throwable e) {
        return e instanceof DirectoryRefusedException d ? d.getMessage() : e.getClass().getSimpleName();
    }

    @Override
    public String toString() {
        return "RunAuthority[directory=" + dir.path() + ", scope_id=" + scopeIdHex() + ", generation="
                + Long.toUnsignedString(keyGeneration()) + ", state=" + state() + "]";
    }
}
