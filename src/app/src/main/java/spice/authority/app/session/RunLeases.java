package spice.authority.app.session;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Optional;
import java.util.function.Consumer;
import org.jboss.logging.Logger;
import spice.authority.app.text.LogText;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.core.RunRecord;
import spice.authority.os.ProcessWatcher;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.ProblemCode;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The lease protocol of the API in one place: every call that gives a session a run lease or an
 * import, acts on one, or ends one, with its bookkeeping in the {@link LeaseBook} and its
 * count in the transition metrics. The HTTP resources only translate requests into these calls
 * and their results into answers.
 *
 * <p><b>Guarantees.</b> A lease or import the authority granted is recorded in its session before
 * anything else can fail the call, or released at once (the run is never left locked with nobody
 * referring to it); each transition is counted exactly once, last, and a count that fails changes
 * no answer. Refusals are {@link AuthorityException}s and {@link SessionException}s.
 */
@ApplicationScoped
public class RunLeases {
    private static final Logger LOG = Logger.getLogger(RunLeases.class);

    private final SessionRegistry sessions;
    private final LeaseBook book;
    private final SessionMetrics metrics;
    private final RunAuthority authority;

    @Inject
    public RunLeases(SessionRegistry sessions, LeaseBook book, SessionMetrics metrics, RunAuthority authority) {
        this.sessions = sessions;
        this.book = book;
        this.metrics = metrics;
        this.authority = authority;
    }

    private RunAuthority authority() {
        return authority;
    }

    /** A lease the session now holds: its run at {@code runGeneration}, ACTIVE. */
    public record Owned(RunId runId, long runGeneration) {}

    /** What a sign answered: the run's new envelope, or the one it is SUSPENDED with, issued again. */
    public sealed interface Signed {
        Envelope envelope();

        /** Written: SUSPENDED (the lease kept) or terminal (the lease ended with the tombstone). */
        record Sealed(Envelope envelope) implements Signed {}

        /** Nothing written: the identical payload of a SUSPENDED run the session does not own. */
        record Reissued(Envelope envelope) implements Signed {}
    }

    /** An import the session holds, prepared from {@code envelope}; {@code repeated}: prepared before. */
    public record Prepared(String importId, Envelope envelope, boolean repeated) {}

    /** A consumed import: its run is durably IMPORTING at {@code runGeneration}. */
    public record Consumed(RunId runId, long runGeneration) {}

    /** What sessions hold now: sessions, leases on runs that are not fenced, and open imports. */
    public record Holdings(int sessions, int ownedRuns, int imports) {}

    // ---- runs -------------------------------------------------------------------------------

    /** Start: durable ACTIVE at generation 1, the lease to {@code s}. */
    public Owned start(Session s, RunId id) throws AuthorityException {
        ActiveRun run;
        try (LeaseBook.Admission admitted = book.admitLease(s)) {
            run = counted("start", () -> authority().start(id, Cancellation.none()), r -> {
                book.own(s, r);
                return r;
            });
        }
        // Plain concatenation, not infof: the lines of every cycle are built without java.util.Formatter
        // (about a quarter of a log line's cost while the request path is still interpreted).
        LOG.info("run " + LogText.of(id.value()) + " started (generation 1)");
        return new Owned(run.runId(), run.runGeneration());
    }

    /**
     * Signs {@code snapshot} on the session's lease of its run: SUSPENDED keeps the lease, a
     * terminal status ends it. A session that does not own the run gets the envelope the run is
     * SUSPENDED with when the payload is identical (a lost answer is never fatal), nothing else.
     */
    public Signed sign(Session s, Snapshot snapshot) throws AuthorityException {
        RunId runId = new RunId(snapshot.runId()); // a decoded snapshot passed P-RUNID, the same rule
        Optional<ActiveRun> lease = book.ownedBy(s, runId);
        if (lease.isEmpty()) {
            if (snapshot.status() != LifecycleStatus.SUSPENDED) {
                throw new SessionException.NotOwned("run " + runId + " is not owned by this session");
            }
            // A lost response is never fatal: the identical payload gives the identical envelope
            // to any session, which neither takes the run nor writes anything.
            Envelope again = counted("reissue", () -> authority().reissue(snapshot));
            LOG.infof("run %s: its SUSPENDED envelope (sequence %s) issued again to a session that does not own it",
                    LogText.of(runId.value()), Long.toUnsignedString(snapshot.lastSequence()));
            return new Signed.Reissued(again);
        }
        ActiveRun run = lease.get();
        ActiveRun.Sealed sealed;
        try {
            sealed = onLease(run, snapshot.status().isTerminal() ? "sign_terminal" : "sign_suspended",
                    () -> run.seal(snapshot, Cancellation.none()));
        } finally {
            if (run.isClosed()) {
                // Terminal: the lease ended with the tombstone, even when building the answer failed.
                book.forget(s, run);
            }
        }
        LOG.info("run " + LogText.of(runId.value()) + " signed " + snapshot.status().wire() + " at sequence "
                + Long.toUnsignedString(snapshot.lastSequence()));
        return new Signed.Sealed(sealed.envelope());
    }

    /** Local resume: durable ACTIVE at the next generation on the session's lease. */
    public Owned resume(Session s, RunId id) throws AuthorityException {
        ActiveRun run = book.leaseOf(s, id);
        onLease(run, "resume", () -> {
            run.resume(Cancellation.none());
            return null;
        });
        return new Owned(id, run.runGeneration());
    }

    /** Releases the session's lease on {@code id} without writing. */
    public void release(Session s, RunId id) throws AuthorityException.Uncertain {
        book.release(s, book.leaseOf(s, id));
    }

    /**
     * Operator action: tombstones an orphan as CANCELLED. A live owner (a session here, an import,
     * or another process) holds the run's lock and the authority refuses busy; an owner proven
     * dead whose exit was not handled yet is closed first; an unknown one keeps the run.
     */
    public RunRecord abandon(RunId id) throws AuthorityException {
        reapOwnerIfDead(id);
        RunRecord r = counted("abandon", () -> authority().abandon(id, Cancellation.none()));
        LOG.infof("run %s abandoned by the operator (CANCELLED at generation %s)", LogText.of(id.value()),
                Long.toUnsignedString(r.runGeneration()));
        return r;
    }

    /** Whether a session holds a lease on {@code runId}. */
    public boolean isOwned(RunId runId) {
        return book.ownerOf(runId).isPresent();
    }

    /** The counts of what sessions hold, as the authority view shows them. */
    public Holdings holdings() {
        RunAuthority a = authority();
        int owned = 0;
        for (Session s : sessions.all()) {
            // A fenced run's lease can no longer act on it: not owned, as its run view says.
            owned += (int) s.runIds().stream().filter(id -> !a.isFenced(id)).count();
        }
        return new Holdings(sessions.all().size(), owned, book.importCount());
    }

    // ---- imports ----------------------------------------------------------------------------

    /**
     * Prepares an import of {@code envelope} for {@code s}: verified against the signed record,
     * then the run locked. Empty: the body was not an envelope at all, a verification failure with
     * the same answer as any other.
     */
    public Prepared prepareImport(Session s, Optional<Envelope> envelope) throws AuthorityException {
        if (envelope.isEmpty()) {
            // SECURITY: a body that is not an envelope at all is a verification failure too, with the same body.
            countQuietly(r -> metrics.transition("prepare_import", r), ProblemCode.VERIFICATION_FAILED.wire());
            throw new AuthorityException.Verification();
        }
        Envelope env = envelope.get();
        // The one run-ID rule, before any owner is looked at or anything is locked: an envelope
        // under a wider ID (token(128) passes its structure) was never issued by this project.
        // Structural, like the rule id of a payload: it says nothing about keys or records.
        RunId runId = RunId.parse(env.runId()).orElseThrow(() -> new SessionException.Invalid(RunId.RULE));
        // The same session preparing the identical envelope again (its answer to the first prepare
        // was lost) gets the import it already holds, not busy: prepare writes nothing, and the
        // host could otherwise neither go on with it nor abort it until its session ends.
        Optional<ImportTx> again = book.preparedImportOf(s, env);
        if (again.isPresent()) {
            countQuietly(r -> metrics.transition("prepare_import", r), "repeated");
            LOG.debug("import of run " + LogText.of(env.runId()) + " prepared again by its session (identical envelope)");
            return new Prepared(again.get().id(), env, true);
        }
        // An owner proven dead whose exit was not handled yet is closed first (as its exit would
        // have); an alive or unknown owner keeps the run's lock, and the import is busy.
        reapOwnerIfDead(runId);
        ImportTx tx;
        try (LeaseBook.Admission admitted = book.admitImport(s)) {
            tx = counted("prepare_import", () -> authority().prepareImport(env, Cancellation.none()),
                    imp -> book.addImport(s, imp, env));
        }
        return new Prepared(tx.id(), env, false);
    }

    /** The consume point of the session's import {@code importId}: durable IMPORTING. */
    public Consumed consume(Session s, String importId) throws AuthorityException {
        ImportTx tx = book.importOf(s, importId);
        RunImport imp = tx.runImport();
        counted("consume", () -> {
            imp.consume(Cancellation.none());
            return null;
        });
        // Answer from the known outcome: a re-read could fail after the durable consume succeeded.
        return new Consumed(tx.runId(), imp.sourceGeneration() + 1);
    }

    /** Activates the session's import {@code importId}: durable ACTIVE, the lease now the session's. */
    public Owned activate(Session s, String importId) throws AuthorityException {
        ImportTx tx = book.importOf(s, importId);
        ActiveRun run = counted("activate", () -> tx.runImport().activate(Cancellation.none()), r -> {
            try {
                book.own(s, r);
            } finally {
                book.removeImport(tx); // activated: the import is done whether or not the session kept the lease
            }
            return r;
        });
        LOG.infof("run %s imported and active at generation %s", LogText.of(tx.runId().value()), Long.toUnsignedString(run.runGeneration()));
        return new Owned(tx.runId(), run.runGeneration());
    }

    /** Aborts the session's import {@code importId}: clean before consume, uncertain after it. */
    public void abort(Session s, String importId) throws AuthorityException {
        ImportTx tx = book.importOf(s, importId);
        book.removeImport(tx);
        tx.runImport().abort();
    }

    /**
     * Before an import or abandon of {@code runId}: if its owning session's host is proven dead
     * but its exit was not handled yet (the exit watcher is behind or has stopped), the session is
     * closed now, exactly as the watcher would have. Alive or unknown owners keep the run.
     */
    void reapOwnerIfDead(RunId runId) {
        // The run's lock is held by a lease or by an import transaction (prepared or consumed):
        // either holder's session, once its host is proven dead, is closed.
        Session owner = book.holderOf(runId).orElse(null);
        if (owner != null && !owner.isClosed() && sessions.liveness(owner) == ProcessWatcher.Liveness.DEAD) {
            sessions.close(owner, "host process " + owner.pid() + " exited");
        }
    }

    // ---- counting ---------------------------------------------------------------------------

    private <T> T counted(String kind, AuthorityCall<T> call) throws AuthorityException {
        return counted(kind, call, t -> t);
    }

    /** {@link #counted} whose result is first recorded by {@code keep} (a lease or import the session now holds). */
    private <T, R> R counted(String kind, AuthorityCall<T> call, Keep<T, R> keep) throws AuthorityException {
        return countedCall(call, keep, result -> metrics.transition(kind, result));
    }

    /**
     * Runs {@code call}, hands a result to {@code keep}, and counts the outcome, in that order: the
     * count comes last and cannot fail the request. A metric that throws (out of memory, say)
     * between a start or an activate and the session recording its lease would leave a lease
     * nobody refers to, its run locked until the helper restarts; and it would turn a refusal's
     * true answer into an unknown outcome.
     */
    static <T, R> R countedCall(AuthorityCall<T> call, Keep<T, R> keep, Consumer<String> count) throws AuthorityException {
        T t;
        try {
            t = call.run();
        } catch (AuthorityException e) {
            countQuietly(count, e.code());
            throw e;
        }
        try {
            return keep.apply(t);
        } finally {
            countQuietly(count, "ok"); // the transition took effect, whatever keeping it did
        }
    }

    private static void countQuietly(Consumer<String> count, String result) {
        try {
            count.accept(result);
        } catch (RuntimeException | Error e) {
            // A count is never worth an answer: the metric is short by one, nothing else changes.
        }
    }

    /** Records a call's result in the session (may refuse it: the session closed meanwhile). */
    @FunctionalInterface
    interface Keep<T, R> {
        R apply(T t) throws AuthorityException;
    }

    @FunctionalInterface
    interface AuthorityCall<T> {
        T run() throws AuthorityException;
    }

    /**
     * {@link #counted} for a call on a lease. A lease that another request of the session ended
     * while this one waited (a release, or a terminal sign) refuses the call before it writes
     * anything; that is "not owned any more" ({@code 409 state_conflict}), not "the helper is
     * closing", which stays the answer only while the authority really closes.
     */
    private <T> T onLease(ActiveRun run, String kind, AuthorityCall<T> call) throws AuthorityException {
        try {
            return counted(kind, call);
        } catch (AuthorityException.Closed e) {
            if (run.isClosed() && "open".equals(authority().state())) {
                throw new SessionException.NotOwned("run " + run.runId() + ": its lease ended while this call waited "
                        + "(released, or ended by another request of this session); nothing was written");
            }
            throw e;
        }
    }
}
