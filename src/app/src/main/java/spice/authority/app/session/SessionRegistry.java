package spice.authority.app.session;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.app.text.LogText;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunImport;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;
import spice.authority.snapshot.envelope.Envelope;

/**
 * All host sessions. A session ends when its host process exits (noticed through the platform's
 * process watcher, not by polling) or when the host deletes it; either way every run lease and
 * import transaction it holds is closed exactly as the RFC closes an owner that died: locks are
 * released, durable records stay as they are.
 *
 * <p>The bookkeeping of leases and imports is package-private: the lease protocol of the API runs
 * through {@link RunLeases}, which records what the authority granted here.
 *
 * <p><b>Guarantees.</b> A run is owned by at most one session; a call naming a session that does
 * not own the run is refused; a session never outlives its process (pid plus start time).
 */
@ApplicationScoped
public class SessionRegistry {
    private static final Logger LOG = Logger.getLogger(SessionRegistry.class);
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Map<String, ImportTx> imports = new ConcurrentHashMap<>();
    private final Map<String, Session> runOwners = new ConcurrentHashMap<>();

    @Inject
    SessionMetrics metrics;

    @Inject
    HelperConfig config;

    @Inject
    Quotas quotas;

    @Inject
    ProcessWatcher processes;

    @Inject
    PeerPolicy peers;

    private ProcessWatcher processes() {
        return processes;
    }

    private String newId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /**
     * Opens a session for the host process {@code pid} of this user.
     *
     * @param fromPeerCredentials the pid came from the socket's peer credentials
     */
    public Session open(long pid, boolean fromPeerCredentials) {
        // SECURITY: a declared host (TCP) must be below init, as a declared ancestor must be on a
        // socket: a session bound to init (or a container's first process) would never end.
        if (!fromPeerCredentials && pid <= 1) {
            throw new SessionException.NotHost("process " + pid + " cannot host a session: not a process of this user below init");
        }
        try {
            return openChecked(processes(), pid, fromPeerCredentials);
        } catch (ProcessWatchException e) {
            throw unknown(pid, e);
        }
    }

    /**
     * On a Unix socket, a caller may declare an ancestor of itself as the host (a shell that runs
     * curl): the session then lives as long as that ancestor. The chain is read from the kernel.
     */
    public Session openForAncestor(long peerPid, long declaredPid) {
        ProcessWatcher pw = processes();
        try {
            return openForAncestor(pw, peerPid, declaredPid);
        } catch (ProcessWatchException e) {
            throw unknown(declaredPid, e);
        }
    }

    private Session openForAncestor(ProcessWatcher pw, long peerPid, long declaredPid) throws ProcessWatchException {
        // RACE: the ancestry and uid are read before the start time that binds the session; a
        // declared process that exits in between and whose pid is reused in that instant yields a
        // session bound to the newcomer, which must itself be a process of this user (checked
        // below), so nothing crosses the user boundary.
        if (declaredPid != peerPid && !isAncestor(pw, declaredPid, peerPid)) {
            throw new SessionException.NotHost("process " + declaredPid + " is neither the caller nor one of its ancestors");
        }
        // SECURITY: the declared host must be a process of this user (never init or a root
        // launcher), or its session would outlive every real host.
        if (declaredPid <= 1 || !ownUser(pw, declaredPid)) {
            throw new SessionException.NotHost("process " + declaredPid + " cannot host a session: not a process of this user below init");
        }
        return openChecked(pw, declaredPid, true);
    }

    /**
     * SECURITY: unknown is not dead, and not alive either: a check that could not be made
     * (descriptor or memory exhaustion, an unreadable /proc) refuses the call as retryable and
     * changes nothing.
     */
    private static SessionException.Unavailable unknown(long pid, ProcessWatchException e) {
        LOG.warnf("liveness of pid %d unknown: %s", pid, e.getMessage());
        return new SessionException.Unavailable("cannot establish the state of process " + pid
                + " (" + e.getMessage() + "); nothing was changed, retry");
    }

    /** True when {@code ancestor} is a parent, grandparent, … of {@code pid} (bounded walk). */
    boolean isAncestor(ProcessWatcher pw, long ancestor, long pid) throws ProcessWatchException {
        long p = pid;
        for (int i = 0; i < 64; i++) {
            OptionalLong parent = pw.parentPid(p);
            if (parent.isEmpty() || parent.getAsLong() <= 0) {
                return false;
            }
            if (parent.getAsLong() == ancestor) {
                return true;
            }
            p = parent.getAsLong();
        }
        return false;
    }

    /**
     * Whether {@code pid} runs as the helper's user. POSIX: its real uid equals the helper's uid
     * read once at start ({@link PeerPolicy#effectiveUid()}), exactly one read per check as
     * before Windows was wired in. Windows (no uid, {@code effectiveUid} -1): the platform compares
     * token user SIDs ({@link ProcessWatcher#isOwnUser}). Unknown throws; never "same user".
     */
    private boolean ownUser(ProcessWatcher pw, long pid) throws ProcessWatchException {
        long euid = peers.effectiveUid();
        if (euid >= 0) {
            OptionalLong uid = pw.realUid(pid);
            return uid.isPresent() && uid.getAsLong() == euid;
        }
        return pw.isOwnUser(pid);
    }

    private Session openChecked(ProcessWatcher pw, long pid, boolean fromPeerCredentials) throws ProcessWatchException {
        // Per process first: one host alone can never fill the helper-wide cap.
        long ofThisProcess = sessions.values().stream().filter(o -> o.pid() == pid).count();
        if (ofThisProcess >= config.maxSessionsPerProcess()) {
            throw new SessionException.Busy("process " + pid + " already has " + ofThisProcess + " sessions",
                    "spice.authority.max-sessions-per-process", config.maxSessionsPerProcess());
        }
        if (sessions.size() >= config.maxSessions()) {
            throw new SessionException.Unavailable("too many sessions (" + config.maxSessions()
                    + "); close idle ones or raise spice.authority.max-sessions");
        }
        quotas.requireDescriptorReserve("a session");
        OptionalLong start = pw.startTime(pid);
        if (start.isEmpty()) {
            throw new SessionException.Invalid("process " + pid + " is not running");
        }
        // SECURITY: bind the uid to the process just identified by its start time (the SPI's
        // pattern: start time, uid, then still alive with that start time). Peer credentials are
        // read at connect time, so even a socket caller's pid is re-checked here: a host that died
        // and whose pid was reused must not leave a session bound to another user's process.
        boolean ours = ownUser(pw, pid);
        ProcessWatcher.Liveness after = pw.liveness(pid, start.getAsLong());
        if (after == ProcessWatcher.Liveness.UNKNOWN) {
            throw new ProcessWatchException("its start time cannot be read again");
        }
        if (!ours || after != ProcessWatcher.Liveness.ALIVE) {
            throw new SessionException.NotHost("process " + pid + " is not a live process of this user");
        }
        Session s = new Session(newId(), pid, start.getAsLong(), fromPeerCredentials);
        // RACE: the size check above and this put are not atomic: concurrent opens may exceed
        // max-sessions by the number of racing requests; the limit bounds memory, not security.
        sessions.put(s.id(), s);
        try {
            s.watch = pw.watch(pid, start.getAsLong(), () -> close(s, "host process " + pid + " exited"));
        } catch (ProcessWatchException | RuntimeException e) {
            sessions.remove(s.id());
            throw new SessionException.Unavailable("cannot watch process " + pid + ": " + e.getMessage());
        } catch (Error e) {
            sessions.remove(s.id()); // no session without a watch, whatever failed
            throw e;
        }
        // RACE: the watch may fire (on the watcher's thread) before s.watch is assigned; close(s)
        // then found no watch to close, so close it here.
        if (s.isClosed()) {
            s.watch.close();
            throw new SessionException.Invalid("process " + pid + " exited while its session was opened");
        }
        LOG.infof("session opened for pid %d (%s)", pid, fromPeerCredentials ? "peer credentials" : "declared, verified");
        metrics.sessionOpened();
        return s;
    }

    /**
     * The live session named by a request.
     *
     * @param callerPid the caller's pid from peer credentials, or empty on TCP
     */
    public Session require(String id, OptionalLong callerPid) {
        if (id == null || id.isBlank()) {
            throw new SessionException.Invalid("this call needs the Spice-Session header (open one with POST /v1/sessions)");
        }
        Session s = sessions.get(id);
        if (s == null || s.isClosed()) {
            throw new SessionException.UnknownSession("unknown or closed session");
        }
        // SECURITY: on a socket, a session is usable only by its host process or that process's
        // descendants (a host's helper tools, or curl run by a host shell).
        try {
            if (callerPid.isPresent() && s.pidFromPeerCredentials() && callerPid.getAsLong() != s.pid()
                    && !isAncestor(processes(), s.pid(), callerPid.getAsLong())) {
                throw new SessionException.NotHost("the session belongs to another process");
            }
        } catch (ProcessWatchException e) {
            throw unknown(callerPid.getAsLong(), e);
        }
        // SECURITY: the exit watcher closes the session asynchronously; until it has, a reused pid
        // must not inherit the session: the host must still be the process that opened it. Only a
        // proof of death closes it; an unknown refuses this call and keeps the session.
        switch (liveness(s)) {
            case ALIVE -> {
                return s;
            }
            case DEAD -> {
                close(s, "host process " + s.pid() + " exited");
                throw new SessionException.UnknownSession("unknown or closed session");
            }
            default -> throw new SessionException.Unavailable("cannot establish whether host process " + s.pid()
                    + " is alive; the session and its leases are kept, retry");
        }
    }

    /**
     * Whether the session's host is still running: from the watch's own descriptor when it has
     * one (sound even when the helper is out of descriptors), else from the process table.
     */
    ProcessWatcher.Liveness liveness(Session s) {
        ProcessWatcher.Watch w = s.watch;
        ProcessWatcher.Liveness l = w != null ? w.liveness() : ProcessWatcher.Liveness.UNKNOWN;
        return l != ProcessWatcher.Liveness.UNKNOWN ? l : processes().liveness(s.pid(), s.startTime());
    }

    /**
     * Before an import or abandon of {@code runId}: if its owning session's host is proven dead
     * but its exit was not handled yet (the exit watcher is behind or has stopped), the session is
     * closed now, exactly as the watcher would have. Alive or unknown owners keep the run.
     */
    void reapOwnerIfDead(String runId) {
        // The run's lock is held by a lease or by an import transaction (prepared or consumed):
        // either holder's session, once its host is proven dead, is closed.
        Session owner = holderOf(runId).orElse(null);
        if (owner != null && !owner.isClosed() && liveness(owner) == ProcessWatcher.Liveness.DEAD) {
            close(owner, "host process " + owner.pid() + " exited");
        }
    }

    /**
     * The session whose lease or open import holds {@code runId}'s lock, if any.
     *
     * <p>RACE: the two maps are read one after the other while an activation may move the run from
     * an import to a lease; a holder missed that way is found on the next import or abandon, and a
     * session is only ever closed here on a proof that its host is dead, so a stale answer never
     * takes a live host's run.
     */
    private Optional<Session> holderOf(String runId) {
        Session owner = runOwners.get(runId);
        if (owner != null) {
            return Optional.of(owner);
        }
        for (ImportTx tx : imports.values()) {
            if (tx.runId().equals(runId)) {
                return Optional.of(tx.session());
            }
        }
        return Optional.empty();
    }

    public Optional<Session> find(String id) {
        return Optional.ofNullable(sessions.get(id));
    }

    public Collection<Session> all() {
        return sessions.values();
    }

    int importCount() {
        return imports.size();
    }

    /** The session that owns {@code runId}, if any. */
    Optional<Session> ownerOf(String runId) {
        return Optional.ofNullable(runOwners.get(runId));
    }

    /** Records that {@code s} now owns {@code run}. */
    void own(Session s, ActiveRun run) throws AuthorityException.Uncertain {
        if (s.isClosed()) {
            // The host died while the call ran: release at once, as its death would have.
            run.close();
            // The transition is durable (own follows a start or an activate): say so, and what is left.
            throw new SessionException.UnknownSession("session closed while the call ran: run " + LogText.of(run.runId())
                    + " was written ACTIVE at generation " + Long.toUnsignedString(run.runGeneration())
                    + " and released with the session; it has no owner now ('runs abandon' ends it)");
        }
        try {
            // The owner first: a release that finds the lease in s.runs always finds its owner too.
            runOwners.put(run.runId(), s);
            s.runs.put(run.runId(), run);
        } catch (RuntimeException | Error e) {
            // Not recorded (say, out of memory): a lease nobody refers to would keep the run's lock
            // until the helper restarts. Released, the run is as its last durable record says.
            s.runs.remove(run.runId(), run);
            runOwners.remove(run.runId(), s);
            closeAfter(run, e);
            throw e;
        }
        // RACE: as in addImport: close() marks before it walks s.runs, so the lease is released by
        // that walk or by this re-check (release is idempotent), never by neither.
        if (s.isClosed()) {
            release(s, run);
        }
    }

    /** Releases a lease that could not be recorded; what that throws is attached to {@code cause}. */
    private static void closeAfter(ActiveRun run, Throwable cause) {
        try {
            run.close();
        } catch (AuthorityException.Uncertain | RuntimeException | Error e) {
            cause.addSuppressed(e);
        }
    }

    /** Aborts an import that could not be recorded; what that throws is attached to {@code cause}. */
    private static void abortAfter(RunImport imp, Throwable cause) {
        try {
            imp.abort();
        } catch (AuthorityException.Uncertain | AuthorityException.State | RuntimeException | Error e) {
            cause.addSuppressed(e);
        }
    }

    /** A place reserved for one more lease or import of a session; closing it ends the reservation. */
    interface Admission extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Before a call that may give {@code s} a new run lease (start): its lease quota, counting
     * what it holds, its open imports (each becomes a lease) and the calls admitted before this
     * one that have not finished; then the helper's descriptor reserve.
     */
    Admission admitLease(Session s) {
        return admit(s, false);
    }

    /** Before a call that opens an import for {@code s}: its import quota, its lease quota, the reserve. */
    Admission admitImport(Session s) {
        return admit(s, true);
    }

    private Admission admit(Session s, boolean isImport) {
        int pending = s.pending.incrementAndGet();
        int pendingImports = isImport ? s.pendingImports.incrementAndGet() : 0;
        Admission admission = new Admission() {
            private final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();

            @Override
            public void close() {
                if (done.compareAndSet(false, true)) {
                    s.pending.decrementAndGet();
                    if (isImport) {
                        s.pendingImports.decrementAndGet();
                    }
                }
            }
        };
        boolean ok = false;
        try {
            int leases = s.runs.size() + s.imports.size() + pending;
            if (leases > config.maxLeasesPerSession()) {
                throw new SessionException.Busy("the session holds " + (leases - 1) + " leases and imports",
                        "spice.authority.max-leases-per-session", config.maxLeasesPerSession());
            }
            int imports = s.imports.size() + pendingImports;
            if (isImport && imports > config.maxImportsPerSession()) {
                throw new SessionException.Busy("the session has " + (imports - 1) + " open imports",
                        "spice.authority.max-imports-per-session", config.maxImportsPerSession());
            }
            quotas.requireDescriptorReserve(isImport ? "an import" : "a run lease");
            ok = true;
            return admission;
        } finally {
            if (!ok) {
                admission.close();
            }
        }
    }

    /** The session's lease on {@code runId}, or a fencing refusal. */
    ActiveRun leaseOf(Session s, String runId) {
        return ownedBy(s, runId).orElseThrow(() -> new SessionException.NotOwned("run " + runId + " is not owned by this session"));
    }

    /** The session's lease on {@code runId}, when it holds one that has not ended. */
    Optional<ActiveRun> ownedBy(Session s, String runId) {
        ActiveRun run = s.runs.get(runId);
        return run == null || run.isClosed() ? Optional.empty() : Optional.of(run);
    }

    /**
     * Drops the session's record of {@code run} after that lease ended (terminal). Only that
     * lease: by then the session may hold a newer one of the same run (released and imported
     * again meanwhile), which stays recorded.
     */
    void forget(Session s, ActiveRun run) {
        if (s.runs.remove(run.runId(), run)) {
            runOwners.remove(run.runId(), s);
        }
    }

    /**
     * Releases the session's lease {@code run} without writing, and drops its record: that lease
     * only, never a newer one of the same run (a repeated release racing a new start or import).
     */
    void release(Session s, ActiveRun run) throws AuthorityException.Uncertain {
        if (s.runs.remove(run.runId(), run)) {
            runOwners.remove(run.runId(), s);
        }
        run.close();
    }

    ImportTx addImport(Session s, RunImport imp, Envelope envelope) {
        ImportTx tx;
        try {
            tx = new ImportTx(newId(), s, imp, ImportTx.digestOf(envelope));
            s.imports.put(tx.id(), tx);
            imports.put(tx.id(), tx);
        } catch (RuntimeException | Error e) {
            // Not recorded (say, out of memory digesting a large envelope): an import nobody refers
            // to would keep the run's lock until the helper restarts. Nothing was consumed: abort.
            s.imports.values().removeIf(t -> t.runImport() == imp);
            imports.values().removeIf(t -> t.runImport() == imp);
            abortAfter(imp, e);
            throw e;
        }
        // RACE: the exit watcher may close the session at any moment. close() marks the session
        // closed before it walks its maps, so either that walk sees the entry just added, or this
        // re-check sees the mark; both may act, and removeImport and abort are idempotent.
        if (s.isClosed()) {
            removeImport(tx);
            try {
                imp.abort();
            } catch (AuthorityException.Uncertain | AuthorityException.State ignored) {
                // cannot be consumed or activated yet: nobody else holds it
            }
            throw new SessionException.UnknownSession("session closed while the call ran; the import was aborted");
        }
        return tx;
    }

    /**
     * The session's open import of exactly {@code envelope} (byte for byte), prepared and neither
     * consumed nor closed: what a host whose answer to the prepare was lost gets when it prepares
     * the same envelope again. Nothing of another session is ever returned.
     */
    Optional<ImportTx> preparedImportOf(Session s, Envelope envelope) {
        byte[] digest = ImportTx.digestOf(envelope);
        for (ImportTx tx : s.imports.values()) {
            RunImport imp = tx.runImport();
            if (tx.runId().equals(envelope.runId()) && tx.preparedFrom(digest) && !imp.isConsumed() && !imp.isClosed()) {
                // As in addImport: a session closing meanwhile aborts its imports; this one is gone.
                if (s.isClosed()) {
                    throw new SessionException.UnknownSession("session closed while the call ran");
                }
                return Optional.of(tx);
            }
        }
        return Optional.empty();
    }

    ImportTx importOf(Session s, String importId) {
        ImportTx tx = imports.get(importId);
        if (tx == null || tx.session() != s) {
            throw new SessionException.NotFound("no import " + importId + " in this session");
        }
        return tx;
    }

    void removeImport(ImportTx tx) {
        imports.remove(tx.id());
        tx.session().imports.remove(tx.id());
    }

    /** Closes a session and everything it holds. Idempotent. */
    public void close(Session s, String reason) {
        if (!s.markClosed(reason)) {
            return;
        }
        sessions.remove(s.id());
        // Every lease and import is let go whatever fails on the way (an Error included): a step
        // skipped would keep a run's lock with nothing left to release it (the session is marked
        // closed and gone from the registry). The first failure is thrown once all are done.
        Throwable failure = null;
        for (ActiveRun run : s.runs.values().toArray(ActiveRun[]::new)) {
            try {
                release(s, run);
                LOG.infof("run %s released: %s", LogText.of(run.runId()), reason);
            } catch (AuthorityException.Uncertain e) {
                LOG.warnf("run %s released while uncertain: %s", LogText.of(run.runId()), reason);
            } catch (RuntimeException | Error e) {
                failure = firstOf(failure, e);
                logQuietly(() -> LOG.errorf("run %s: release failed (%s): %s", LogText.of(run.runId()), e.getClass().getName(), reason));
            }
        }
        for (ImportTx tx : s.imports.values().toArray(ImportTx[]::new)) {
            try {
                removeImport(tx);
                tx.runImport().abort();
                LOG.infof("import of run %s aborted: %s", LogText.of(tx.runId()), reason);
            } catch (AuthorityException.Uncertain e) {
                LOG.warnf("import of run %s aborted after its consume point (run stays IMPORTING): %s", LogText.of(tx.runId()), reason);
            } catch (AuthorityException.State e) {
                // Activated meanwhile: the activation hands the lease to this session, whose
                // closing then releases it (own() sees the closed session).
                LOG.infof("import of run %s was activated as the session closed: %s", LogText.of(tx.runId()), reason);
            } catch (RuntimeException | Error e) {
                failure = firstOf(failure, e);
                logQuietly(() -> LOG.errorf("import of run %s: abort failed (%s): %s", LogText.of(tx.runId()), e.getClass().getName(), reason));
            }
        }
        // The watch last: closing it wakes the watcher's thread, which can fail (no memory), and no
        // lock may wait on that.
        ProcessWatcher.Watch w = s.watch;
        if (w != null) {
            try {
                w.close();
            } catch (RuntimeException | Error e) {
                failure = firstOf(failure, e);
            }
        }
        LOG.infof("session for pid %d closed: %s", s.pid(), reason);
        metrics.sessionClosed();
        rethrow(failure);
    }

    /** Throws {@code failure} as it is (a RuntimeException or an Error), if there is one. */
    private static void rethrow(Throwable failure) {
        if (failure instanceof Error e) {
            throw e;
        }
        if (failure != null) {
            throw (RuntimeException) failure;
        }
    }

    private static Throwable firstOf(Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }

    /** A log line that must not stop a clean-up (logging itself may fail when memory runs out). */
    private static void logQuietly(Runnable line) {
        try {
            line.run();
        } catch (RuntimeException | Error ignored) {
            // the clean-up goes on; the failure itself is thrown by the caller
        }
    }

    /**
     * Closes every session, each whatever another's close threw (since {@link #close} throws its
     * first failure once done, one session's Error would otherwise leave the rest holding their
     * runs' locks at shutdown); the first failure is thrown at the end.
     */
    public void closeAll(String reason) {
        Throwable failure = null;
        for (Session s : sessions.values().toArray(Session[]::new)) {
            try {
                close(s, reason);
            } catch (RuntimeException | Error e) {
                failure = firstOf(failure, e);
            }
        }
        rethrow(failure);
    }
}
