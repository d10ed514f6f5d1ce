package spice.authority.app.session;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.text.LogText;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunImport;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;

/**
 * The bookkeeping of run leases and import transactions: which session holds which lease and
 * which import, which session owns a run, and the per-session quotas on both. The lease protocol
 * ({@link RunLeases}) records here what the authority granted; a session's closing
 * ({@link SessionRegistry#close}) lets go here of everything it held.
 *
 * <p><b>Guarantees.</b> A run is owned by at most one session; a lease or import is recorded in
 * its session or released at once, never left locked with nobody referring to it; a session that
 * closed while a call ran keeps nothing that call granted.
 */
@ApplicationScoped
public class LeaseBook {
    private static final Logger LOG = Logger.getLogger(LeaseBook.class);
    private final SecureRandom random = new SecureRandom();
    private final Map<String, ImportTx> imports = new ConcurrentHashMap<>();
    private final Map<RunId, Session> runOwners = new ConcurrentHashMap<>();

    @Inject
    HelperConfig config;

    @Inject
    Quotas quotas;

    private String newId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /**
     * The session whose lease or open import holds {@code runId}'s lock, if any.
     *
     * <p>RACE: the two maps are read one after the other while an activation may move the run from
     * an import to a lease; a holder missed that way is found on the next import or abandon, and a
     * session is only ever closed on that answer on a proof that its host is dead
     * ({@link RunLeases#reapOwnerIfDead}), so a stale answer never takes a live host's run.
     */
    Optional<Session> holderOf(RunId runId) {
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

    int importCount() {
        return imports.size();
    }

    /** The session that owns {@code runId}, if any. */
    Optional<Session> ownerOf(RunId runId) {
        return Optional.ofNullable(runOwners.get(runId));
    }

    /** Records that {@code s} now owns {@code run}. */
    void own(Session s, ActiveRun run) throws AuthorityException.Uncertain {
        if (s.isClosed()) {
            // The host died while the call ran: release at once, as its death would have.
            run.close();
            // The transition is durable (own follows a start or an activate): say so, and what is left.
            throw new SessionException.UnknownSession("session closed while the call ran: run " + LogText.of(run.runId().value())
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
    ActiveRun leaseOf(Session s, RunId runId) {
        return ownedBy(s, runId).orElseThrow(() -> new SessionException.NotOwned("run " + runId + " is not owned by this session"));
    }

    /** The session's lease on {@code runId}, when it holds one that has not ended. */
    Optional<ActiveRun> ownedBy(Session s, RunId runId) {
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
            if (tx.runId().value().equals(envelope.runId()) && tx.preparedFrom(digest) && !imp.isConsumed() && !imp.isClosed()) {
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

    /**
     * Lets go of everything the closed session {@code s} held: releases every lease and aborts
     * every import, whatever fails on the way (an Error included), since a step skipped would keep
     * a run's lock with nothing left to release it. For {@link SessionRegistry#close}.
     *
     * @return the first failure, the later ones suppressed in it; null when none
     */
    Throwable releaseAll(Session s, String reason) {
        Throwable failure = null;
        for (ActiveRun run : s.runs.values().toArray(ActiveRun[]::new)) {
            try {
                release(s, run);
                LOG.infof("run %s released: %s", LogText.of(run.runId().value()), reason);
            } catch (AuthorityException.Uncertain e) {
                LOG.warnf("run %s released while uncertain: %s", LogText.of(run.runId().value()), reason);
            } catch (RuntimeException | Error e) {
                failure = SessionRegistry.firstOf(failure, e);
                logQuietly(() -> LOG.errorf("run %s: release failed (%s): %s", LogText.of(run.runId().value()), e.getClass().getName(), reason));
            }
        }
        for (ImportTx tx : s.imports.values().toArray(ImportTx[]::new)) {
            try {
                removeImport(tx);
                tx.runImport().abort();
                LOG.infof("import of run %s aborted: %s", LogText.of(tx.runId().value()), reason);
            } catch (AuthorityException.Uncertain e) {
                LOG.warnf("import of run %s aborted after its consume point (run stays IMPORTING): %s", LogText.of(tx.runId().value()), reason);
            } catch (AuthorityException.State e) {
                // Activated meanwhile: the activation hands the lease to this session, whose
                // closing then releases it (own() sees the closed session).
                LOG.infof("import of run %s was activated as the session closed: %s", LogText.of(tx.runId().value()), reason);
            } catch (RuntimeException | Error e) {
                failure = SessionRegistry.firstOf(failure, e);
                logQuietly(() -> LOG.errorf("import of run %s: abort failed (%s): %s", LogText.of(tx.runId().value()), e.getClass().getName(), reason));
            }
        }
        return failure;
    }

    /** A log line that must not stop a clean-up (logging itself may fail when memory runs out). */
    private static void logQuietly(Runnable line) {
        try {
            line.run();
        } catch (RuntimeException | Error ignored) {
            // the clean-up goes on; the failure itself is thrown by the caller
        }
    }
}
