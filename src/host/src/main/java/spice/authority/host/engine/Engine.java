package spice.authority.host.engine;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import spice.authority.host.HelperProblem;
import spice.authority.host.ImportView;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.json.SafeText;
import spice.authority.snapshot.payload.Definition;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.payload.Role;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.plan.PlanIdentities;

/**
 * The reference host engine of RFC 0007: runs driven by a {@link Model} and the tools of a leased
 * plan, exported as signed snapshots through the helper, and imported in another process in the
 * RFC's order.
 *
 * <pre>{@code
 * try (HostStore store = HostStore.open(HostStore.defaultPath("my-agent"));   // spice-authority-host-store
 *      Engine engine = Engine.builder(model, plans)
 *              .identity(EngineIdentity.generated("my-agent/v3", List.of("provider:my-agent@3.1.0")))
 *              .recorder(store)
 *              .open(AuthorityClient.onDefaultSocket())) {
 *     store.recover(engine);                 // after a crash: every suspended run resumed, once
 *     Run run = engine.start("run-1", new Definition("agent", "model-x", 8), "hello");
 *     run.runTurn();
 *     run.suspend();                         // the envelope is in the store; the process may die now
 * }
 * }</pre>
 * Without a store, {@link Run#suspend()} returns the envelope for the host to keep, and
 * {@link #importRun(byte[])} takes it in another process once this one is dead.
 *
 * <p>Guarantees (the host rules of RFC 0007 and wire-format.md e.7 and f):
 * <ul>
 *   <li>Snapshot format: payloads are written in the engine's {@link #format()} (default v1alpha2),
 *       and only envelopes of that format, whose workspace fingerprint is the engine's, are
 *       imported: another format or workspace is refused before the helper hears of the import
 *       and before any plan is leased.
 *   <li>Import order: the helper prepares (verifies the HMAC, locks the run) before anything else;
 *       then suspended-only, never-seen run ID, compatibility, the recorded plan leased and the
 *       combined plan identity recomputed — a missing, substituted or changed plan releases the
 *       candidate lease and aborts the import; then consume, commit of the engine run, activate.
 *   <li>A prepare whose answer was lost is asked once more with the same envelope: the helper
 *       answers its session with the import it already holds, so the import goes on as usual.
 *   <li>A failure before consume aborts at the helper and leaves no engine state; after consume it
 *       is {@link ImportUncertainException}, never retried by the engine (the client repeats a call
 *       only on an answer that proves nothing happened: unreachable, {@code unavailable}, a
 *       {@code busy} with Retry-After; never one whose outcome is unknown); an uncertain activate stops and joins
 *       the committed run before the import transaction is released, and the run never executes;
 *       a lease the activate may have taken is then handed back, as after a start whose answer was
 *       lost, so the run can be abandoned before this session ends.
 *   <li>An imported run continues at {@code last_sequence + 1} with RunResumed, never a second
 *       RunStarted; its log holds no earlier events, so older cursors fail with the snapshot
 *       sequence as recovery cursor.
 *   <li>A run ID is used once per engine: a run it started or imported cannot be imported again.
 * </ul>
 * The helper session of its {@link Authority} must be this engine's alone: the engine reads a
 * lease its session holds as its own (it hands back, after a lost answer, whatever lease of that
 * run ID the session holds). Build one engine per session; after {@link #close()}, open a new one.
 * Thread-safe.
 */
public final class Engine implements AutoCloseable {
    /**
     * The highest {@code last_sequence} this engine imports (unsigned, 2^64 - 2 - 2^32): a run
     * must keep room for its RunResumed and many turns (the event log refuses to wrap).
     */
    public static final long MAX_IMPORTED_SEQUENCE = 0xFFFF_FFFE_FFFF_FFFEL;

    private final Authority authority;
    private final Model model;
    private final ToolPlanSource plans;
    private final EngineIdentity identity;
    private final SnapshotFormat format;
    private final int logCapacity;
    private final List<EventListener> listeners;
    private final Recorder recorder;
    /** The helper session this engine opened ({@link Builder#open}), closed with it; or null. */
    private final AutoCloseable ownedSession;
    private final Set<String> seenRunIds = new HashSet<>();
    /** Run IDs whose import is under way in this engine (guarded by this). */
    private final Set<String> importing = new HashSet<>();
    private final Map<String, Run> runs = new ConcurrentHashMap<>();
    private boolean closed;

    private Engine(Builder b, Authority authority, AutoCloseable ownedSession) {
        this.authority = GuardedAuthority.of(authority);
        this.recorder = b.recorder;
        this.ownedSession = ownedSession;
        this.model = b.model;
        this.plans = b.plans;
        this.identity = b.identity;
        this.format = b.format;
        this.logCapacity = b.logCapacity;
        this.listeners = List.copyOf(b.listeners);
    }

    /** An engine on {@code authority}, driven by {@code model}, leasing tools from {@code plans}. */
    public static Builder builder(Authority authority, Model model, ToolPlanSource plans) {
        return new Builder(Objects.requireNonNull(authority, "authority"), model, plans);
    }

    /**
     * An engine driven by {@code model}, leasing tools from {@code plans}, that opens its own
     * helper session with {@link Builder#open}: the usual way. The engine closes the session in
     * {@link #close()}, which releases every lease it still holds.
     */
    public static Builder builder(Model model, ToolPlanSource plans) {
        return new Builder(null, model, plans);
    }

    /** Options of an engine. */
    public static final class Builder {
        private final Authority authority;
        private final Model model;
        private final ToolPlanSource plans;
        private EngineIdentity identity = EngineIdentity.convenience();
        private SnapshotFormat format = SnapshotFormat.V1ALPHA2;
        private int logCapacity = 4096;
        private final List<EventListener> listeners = new CopyOnWriteArrayList<>();
        private Recorder recorder = Recorder.NONE;
        private java.util.function.UnaryOperator<Authority> decorator = a -> a;

        private Builder(Authority authority, Model model, ToolPlanSource plans) {
            this.authority = authority;
            this.model = Objects.requireNonNull(model, "model");
            this.plans = Objects.requireNonNull(plans, "plans");
        }

        /** The engine's static identity; default {@link EngineIdentity#convenience()} (not importable). */
        public Builder identity(EngineIdentity identity) {
            this.identity = Objects.requireNonNull(identity, "identity");
            return this;
        }

        /**
         * The snapshot format this engine writes and imports (default
         * {@link SnapshotFormat#V1ALPHA2}, the format RFC 0007 as implemented here specifies and
         * every stored run and client uses today). {@link SnapshotFormat#V1ALPHA3} is what a
         * current spice-agent writes: choose it to hand runs to and from spice-agent HEAD. An
         * engine imports only envelopes of its own format. A workspace fingerprint in the
         * {@link #identity identity} needs v1alpha3, and a v1alpha3 engine with a compatibility
         * identity needs one (rule P-WORKSPACE): {@link #build()} and {@link #open} refuse both.
         */
        public Builder format(SnapshotFormat format) {
            this.format = Objects.requireNonNull(format, "format");
            return this;
        }

        /** Format and identity together (P-WORKSPACE), before anything is opened. */
        private void requireCoherent() {
            String ws = identity.workspaceFingerprint();
            if (!format.hasWorkspaceFingerprint() && !ws.isEmpty()) {
                throw new IllegalStateException("the engine identity has a workspace fingerprint, which "
                        + format.wire() + " cannot carry: choose format(SnapshotFormat.V1ALPHA3) or an identity without one");
            }
            if (format.hasWorkspaceFingerprint()
                    && !spice.authority.snapshot.payload.PlanIdentity.workspaceAllowed(identity.compatibilityIdentity(), ws)) {
                throw new IllegalStateException(format.wire() + " requires a workspace fingerprint (sha256: and 64 lowercase "
                        + "hex digits) when the compatibility identity is not empty (rule P-WORKSPACE): use "
                        + "EngineIdentity.withWorkspace");
            }
        }

        /** How many events each run's log retains (default 4096). */
        public Builder logCapacity(int capacity) {
            if (capacity < 1) {
                throw new IllegalArgumentException("log capacity must be positive");
            }
            this.logCapacity = capacity;
            return this;
        }

        /** Told of every event of every run of this engine. */
        public Builder listener(EventListener l) {
            listeners.add(Objects.requireNonNull(l, "listener"));
            return this;
        }

        /**
         * The engine's run store (a required observer: see {@link Recorder}); default
         * {@link Recorder#NONE}, which keeps nothing.
         */
        public Builder recorder(Recorder r) {
            this.recorder = Objects.requireNonNull(r, "recorder");
            return this;
        }

        /**
         * Wraps the authority {@link #open} builds (for example a {@link ForwardingAuthority} that
         * reports or times calls); the engine still checks every answer it passes on.
         */
        public Builder decorate(java.util.function.UnaryOperator<Authority> decorator) {
            this.decorator = Objects.requireNonNull(decorator, "decorator");
            return this;
        }

        /** The engine on the {@link Authority} given to {@link Engine#builder(Authority, Model, ToolPlanSource)}. */
        public Engine build() {
            if (authority == null) {
                throw new IllegalStateException("this builder has no authority: use open(client)");
            }
            requireCoherent();
            return new Engine(this, authority, null);
        }

        /**
         * Opens a helper session through {@code client} and the engine on it; {@link #close()}
         * closes the session (releasing the leases it still holds).
         */
        public Engine open(spice.authority.host.AuthorityClient client) throws IOException {
            Objects.requireNonNull(client, "client");
            if (authority != null) {
                throw new IllegalStateException("this builder has an authority already: use build()");
            }
            requireCoherent();
            spice.authority.host.Session session = client.openSession();
            Authority decorated;
            try {
                decorated = Objects.requireNonNull(decorator.apply(Authorities.of(client, session)), "decorated authority");
            } catch (RuntimeException e) {
                try {
                    client.closeSession(session);
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
            return new Engine(this, decorated, () -> client.closeSession(session));
        }
    }

    Authority authority() {
        return authority;
    }

    Model model() {
        return model;
    }

    int logCapacity() {
        return logCapacity;
    }

    List<EventListener> listeners() {
        return listeners;
    }

    Recorder recorder() {
        return recorder;
    }

    /**
     * Asks the helper to sign {@code payload} again, the identical payload of a checkpoint whose
     * envelope was lost (the helper answers the identical envelope for a SUSPENDED run, to any
     * session). The answer must be the envelope of exactly that payload.
     */
    public byte[] reissue(String runId, byte[] payload) throws IOException {
        return authority.sign(runId, payload);
    }

    /** The helper's view of a run (phase, generation, owned, fenced). */
    public spice.authority.host.RunView helperView(String runId) throws IOException {
        return authority.inspect(runId);
    }

    public EngineIdentity identity() {
        return identity;
    }

    /** The snapshot format this engine writes and imports. */
    public SnapshotFormat format() {
        return format;
    }

    /** The run with this ID in this engine, or {@code null}. */
    public Run run(String runId) {
        return runs.get(runId);
    }

    /**
     * Starts a new run: leases the current tool plan, ACTIVE at the helper, then RunStarted (sequence 1)
     * and the first user message (its ID {@code <run>/message/user}).
     *
     * <p>Against a concurrent {@link #close()}: a start that returns gave a run that close then
     * stops like any other; a start that close overtook is refused with {@link RunStateException},
     * before it took the helper's lease or after releasing it, and its run (if registered) is
     * STOPPED and never runs.
     */
    public Run start(String runId, Definition definition, String userText) throws EngineException {
        Objects.requireNonNull(definition, "definition");
        if (!RunId.isValid(runId)) {
            throw new RunStateException("run ID refused: " + RunId.RULE);
        }
        Objects.requireNonNull(userText, "userText");
        reserveRunId(runId, "start");
        ToolPlanSource.Lease lease = null;
        boolean ok = false;
        boolean helperStarted = false;
        try {
            try {
                lease = plans.lease(plans.currentPlanId());
            } catch (ToolPlanSource.PlanUnavailableException e) {
                throw new RunStateException("cannot start run " + runId + ": " + e.getMessage());
            }
            PlanIdentity plan;
            Message first = new Message(runId + "/message/user", Role.USER, List.of(new Part.Text(userText)));
            try {
                plan = planIdentity(lease);
                // Everything a snapshot of this run will carry is valid before the helper hears of it.
                Snapshot.builder().format(format).runId(runId).definition(definition).completedTurns(0).planIdentity(plan)
                        .seenInteractionIds(List.of()).lastSequence(2).status(LifecycleStatus.CANCELLED)
                        .addMessage(first).build();
            } catch (PayloadRejectedException | IllegalArgumentException e) {
                throw new RunStateException("cannot start run " + runId + ": " + e.getMessage());
            }
            try {
                recorder.begin(new Recorder.RunFacts(runId, plan, StaticToolPlan.definitions(lease.tools()), 1, null));
            } catch (Recorder.RecordingException | RuntimeException e) {
                forgetRunId(runId);
                throw new RecordFailedException("run " + runId + " was not started: the store could not record it ("
                        + e.getMessage() + ")", e);
            }
            try {
                authority.start(runId);
                helperStarted = true;
            } catch (IOException e) {
                if (Authorities.outcomeUnknown(e)) {
                    // The answer was lost: the run may be ACTIVE with this session's lease. The run ID is
                    // reserved in this engine, and the session is the engine's alone, so a lease the
                    // helper releases for this session proves the start took effect.
                    HandBack back = handBack(runId, "start");
                    throw new AuthorityFailedException("the helper's answer to the start of run " + runId + " was lost"
                            + back.text(), e, Authorities.outcomeUnknown(e), back.outcome());
                }
                throw new AuthorityFailedException("the helper did not start run " + runId, e);
            }
            Run run = new Run(this, runId, definition, 1, List.of(), 0, List.of());
            run.bind(plan, lease);
            if (!register(run)) {
                throw new RunStateException("cannot start run " + runId + ": the engine was closed meanwhile; "
                        + releaseAfterClose(runId));
            }
            if (!run.started(first)) {
                // The engine closed (and stopped the run) between its registration and its start:
                // it never runs; hand the helper's lease back now, not at the session's end.
                throw new RunStateException("cannot start run " + runId + ": the engine was closed meanwhile; "
                        + releaseAfterClose(runId));
            }
            ok = true;
            return run;
        } catch (EngineException | RuntimeException e) {
            if (!helperStarted && !(e instanceof AuthorityFailedException a && a.uncertain())
                    && !(e instanceof RecordFailedException)) {
                forgetRunId(runId); // provably not started: the ID may be used again
            }
            throw e;
        } finally {
            if (!ok && lease != null) {
                lease.release();
            }
        }
    }

    /** Adds a run unless the engine is closed. */
    private synchronized boolean register(Run run) {
        if (closed) {
            return false;
        }
        runs.put(run.runId(), run);
        return true;
    }

    /**
     * Hands this session's lease of {@code runId} back to the helper (where it holds none, or the
     * helper cannot be asked, the session's end releases any).
     */
    private LeaseHandBack release(String runId) {
        try {
            CleanUp.uninterrupted(() -> authority.release(runId));
            return LeaseHandBack.HANDED_BACK;
        } catch (HelperProblem.StateConflict notHeld) {
            return LeaseHandBack.NOT_HELD;
        } catch (IOException unknown) {
            return LeaseHandBack.UNKNOWN;
        }
    }

    /**
     * After a local resume whose answer was lost: the helper may or may not have written ACTIVE at
     * the next generation, and the session holds the run's lease either way. Hands it back, so that
     * the run has a way forward whichever it was (SUSPENDED: its envelope imports in another
     * process; ACTIVE with no owner: the operator's abandon ends it); says what came of it.
     */
    String handBackAfterLostResume(String runId) {
        return switch (release(runId)) {
            case NONE -> "";
            case HANDED_BACK -> "; its lease was handed back: 'spice-authority runs show " + runId + "' tells whether the "
                    + "resume took effect (ACTIVE with no owner: 'spice-authority runs abandon " + runId + "' ends it) "
                    + "or not (SUSPENDED: the envelope imports in another process)";
            case NOT_HELD -> "; this session held no lease of it when asked";
            case UNKNOWN -> "; whether this session still holds its lease is unknown (the release failed); the "
                    + "session's end releases any";
        };
    }

    /** Hands back the lease of a run the closing engine will not run; says what came of it. */
    private String releaseAfterClose(String runId) {
        return switch (release(runId)) {
            case NONE -> "";
            case HANDED_BACK -> "its lease was released";
            case NOT_HELD -> "this session held no lease of it";
            case UNKNOWN -> "releasing its lease failed; the session's end releases it";
        };
    }

    /**
     * After a call whose answer was lost and which may have leased {@code runId} to this session
     * (a start, an activate): hands the lease back, so that the run does not stay owned, and so not
     * abandonable, until the session ends; says what came of it.
     */
    /** A hand-back and its words for the caller's message. */
    record HandBack(LeaseHandBack outcome, String text) {
    }

    private HandBack handBack(String runId, String call) {
        LeaseHandBack r = release(runId);
        return new HandBack(r, switch (r) {
            case NONE -> "";
            case HANDED_BACK -> "; the " + call + " had taken effect: its lease was handed back, so the run is ACTIVE with no "
                    + "owner ('spice-authority runs abandon " + runId + "' ends it)";
            case NOT_HELD -> "; this session held no lease of it when asked (a " + call + " still being carried out "
                    + "at the helper keeps its lease until this session ends)";
            case UNKNOWN -> "; whether this session holds its lease is unknown (the release failed); the session's end "
                    + "releases any";
        });
    }

    private synchronized void reserveRunId(String runId, String what) throws EngineException {
        if (closed) {
            throw new RunStateException("cannot " + what + " run " + runId + ": the engine is closed");
        }
        if (!seenRunIds.add(runId)) {
            throw new ImportRefusedException(ImportRefusedException.Reason.ALREADY_IMPORTED,
                    "run " + runId + " was already started or imported by this engine", null);
        }
    }

    private synchronized void forgetRunId(String runId) {
        seenRunIds.remove(runId);
    }

    private synchronized boolean seen(String runId) {
        return seenRunIds.contains(runId);
    }

    /**
     * Imports a signed envelope exported by another process, which must be dead (the helper
     * refuses while the owner lives): prepare, plan lease and identity, consume, commit, activate.
     * Returns the run, RUNNING at {@code last_sequence + 2} after its RunResumed.
     *
     * @throws ImportRefusedException nothing changed (aborted before consume)
     * @throws ImportUncertainException failed after consume: never retry automatically
     */
    public Run importRun(byte[] envelopeBytes) throws EngineException {
        return importRun(envelopeBytes, null);
    }

    /**
     * As {@link #importRun(byte[])}, for a run whose events from before the snapshot a store kept:
     * a cursor inside {@code older} is served from it rather than failing with the recovery cursor.
     */
    public Run importRun(byte[] envelopeBytes, EventHistory older) throws EngineException {
        Objects.requireNonNull(envelopeBytes, "envelope");
        Envelope envelope;
        try {
            envelope = Envelope.parse(envelopeBytes);
        } catch (EnvelopeRejectedException e) {
            throw new ImportRefusedException(ImportRefusedException.Reason.MALFORMED,
                    "the envelope is not a valid snapshot envelope: " + e.getMessage(), null);
        }
        // Format and workspace before the helper hears of the import (nothing is prepared or locked
        // there) and before any plan is leased: this engine can take neither another format's run
        // nor another workspace's.
        if (SnapshotFormat.fromWire(envelope.format()).orElse(null) != format) {
            throw new ImportRefusedException(ImportRefusedException.Reason.FORMAT_MISMATCH, "the envelope's format \""
                    + SafeText.bounded(envelope.format(), 64) + "\" is not this engine's " + format.wire()
                    + ": an engine imports only its own format", null);
        }
        Snapshot snapshot;
        try {
            snapshot = Snapshot.decode(envelope.payload(), Set.of(format));
        } catch (PayloadRejectedException e) {
            throw new ImportRefusedException(ImportRefusedException.Reason.MALFORMED,
                    "the envelope is not a valid snapshot envelope: " + e.getMessage(), null);
        }
        String runId = snapshot.runId();
        if (!snapshot.workspaceFingerprint().equals(identity.workspaceFingerprint())) {
            throw new ImportRefusedException(ImportRefusedException.Reason.WORKSPACE_MISMATCH, "run " + runId
                    + " belongs to workspace " + workspaceText(snapshot.workspaceFingerprint()) + ", this engine to "
                    + workspaceText(identity.workspaceFingerprint()) + ": a run is imported only into its own workspace",
                    null);
        }
        // One import of a run at a time in this engine: the helper answers a repeated prepare of the
        // same envelope by this session with the import it holds, so two concurrent imports of one
        // envelope would otherwise share (and abort) one import.
        synchronized (this) {
            if (!importing.add(runId)) {
                throw new ImportRefusedException(ImportRefusedException.Reason.IMPORT_IN_PROGRESS,
                        "an import of run " + runId + " is already under way in this engine; try again once it has ended",
                        null);
            }
        }
        try {
            return importRun(envelopeBytes, snapshot, runId, older);
        } finally {
            synchronized (this) {
                importing.remove(runId);
            }
        }
    }

    private Run importRun(byte[] envelopeBytes, Snapshot snapshot, String runId, EventHistory older)
            throws EngineException {
        // 1. The helper verifies the HMAC and locks the run before any engine-side work.
        ImportView tx;
        boolean firstLost = false;
        try {
            try {
                tx = authority.prepareImport(envelopeBytes);
            } catch (IOException lost) {
                // Not when the caller interrupted the thread: it asked for the import to stop.
                if (!Authorities.outcomeUnknown(lost) || Thread.currentThread().isInterrupted()) {
                    throw lost;
                }
                // Prepare writes nothing durable, and the helper answers its session preparing the
                // identical envelope again (before consume) with the import it already holds: asking
                // once more recovers the import, so it can go on or be aborted.
                firstLost = true;
                tx = authority.prepareImport(envelopeBytes);
            }
        } catch (IOException e) {
            // When an answer was lost (the first or the repeated one's), the helper may still hold the
            // run's import lock for this session (busy to others) until the session ends.
            throw new ImportRefusedException(ImportRefusedException.Reason.AUTHORITY_REFUSED,
                    (firstLost || Authorities.outcomeUnknown(e)
                            ? "the helper's answer to the import of run " + runId + " was lost (nothing durable was written; "
                                    + "it may hold the prepared import until this session ends): "
                            : "the helper refused to import run " + runId + ": ") + e.getMessage(), e);
        }
        // 2. Engine-side checks and the plan lease; any refusal aborts the prepared import.
        ToolPlanSource.Lease lease;
        try {
            lease = checkAndLease(snapshot, tx);
        } catch (ImportRefusedException refused) {
            abortQuietly(tx, refused);
            throw refused;
        } catch (RuntimeException e) {
            ImportRefusedException refused = new ImportRefusedException(ImportRefusedException.Reason.PLAN_MISSING,
                    "run " + runId + ": leasing or checking the recorded plan failed: " + e, null);
            abortQuietly(tx, refused);
            throw refused;
        }
        // The store knows of the run before its durable consume point.
        try {
            recorder.begin(new Recorder.RunFacts(runId, snapshot.planIdentity(), StaticToolPlan.definitions(lease.tools()),
                    snapshot.lastSequence() + 1, envelopeBytes.clone()));
        } catch (Recorder.RecordingException | RuntimeException e) {
            lease.release();
            forgetRunId(runId);
            ImportRefusedException refused = new ImportRefusedException(ImportRefusedException.Reason.STORE_FAILED,
                    "run " + runId + " was not imported: the store could not record it (" + e.getMessage() + ")", null);
            abortQuietly(tx, refused);
            throw refused;
        }
        // 3. Consume: the durable consume point.
        try {
            authority.consume(tx);
        } catch (IOException e) {
            lease.release();
            if (Authorities.outcomeUnknown(e)) {
                // The run ID stays reserved: the run may be IMPORTING for this engine.
                abortQuietly(tx, e);
                throw new ImportUncertainException(runId, "consume of run " + runId + " is uncertain: " + e.getMessage()
                        + "; it is not retried", e);
            }
            ImportRefusedException refused = new ImportRefusedException(ImportRefusedException.Reason.CONSUME_REFUSED,
                    "the helper refused to consume run " + runId + ": " + e.getMessage(), e);
            forgetRunId(runId);
            abortQuietly(tx, refused);
            throw refused;
        }
        // 4. Commit the engine run (not executing: no lease yet).
        Run run;
        try {
            run = new Run(this, runId, snapshot.definition(), snapshot.lastSequence() + 1, snapshot.history(),
                    snapshot.completedTurns(), snapshot.seenInteractionIds(), older);
            run.bind(snapshot.planIdentity(), lease);
        } catch (RuntimeException e) {
            // After the consume point nothing may escape unhandled: release what this import holds.
            lease.release();
            abortQuietly(tx, e);
            throw new ImportUncertainException(runId, "run " + runId + " could not be committed after its consume point ("
                    + e + "); the import was released and is not retried", new IOException(e.toString()));
        }
        if (!register(run)) {
            lease.release();
            abortQuietly(tx, null);
            throw new ImportUncertainException(runId, "the engine was closed during the import of run " + runId
                    + " after its consume point; the import was released and is not retried", null);
        }
        // 5. Activate: only a returned active lease lets the run execute.
        try {
            authority.activate(tx);
        } catch (IOException e) {
            // RFC 0007: stop and join the committed run before Abort/Close releases the import lock;
            // never continue without an active lease.
            run.stopAndJoin();
            abortQuietly(tx, e);
            // An activate that took effect left the run ACTIVE with this session's lease (the abort is
            // then refused): hand it back, so the run can be abandoned before the session ends.
            HandBack back = handBack(runId, "activate");
            throw new ImportUncertainException(runId, "activate of run " + runId + " failed after consume ("
                    + e.getMessage() + "); the committed run was stopped and joined, and is not retried"
                    + back.text(), e, back.outcome());
        }
        if (!run.activated()) {
            // The engine closed (and stopped the run) while the helper activated it: hand it back.
            throw new RunStateException("the engine was closed while run " + runId + " was activated; "
                    + releaseAfterClose(runId));
        }
        return run;
    }

    private ToolPlanSource.Lease checkAndLease(Snapshot s, ImportView tx) throws ImportRefusedException {
        String runId = s.runId();
        if (s.status() != LifecycleStatus.SUSPENDED) {
            throw refused(ImportRefusedException.Reason.NOT_SUSPENDED, "run " + runId + " is " + s.status().wire()
                    + ": terminal snapshots are inspectable, never resumable");
        }
        if (Long.compareUnsigned(s.lastSequence(), MAX_IMPORTED_SEQUENCE) > 0) {
            // Before consume: the run stays SUSPENDED at the helper (nothing changes), where only the
            // operator's abandon ends it; taken, its events would run out in the middle of a turn.
            throw refused(ImportRefusedException.Reason.SEQUENCE_SPACE, "run " + runId + " is at event sequence "
                    + Long.toUnsignedString(s.lastSequence()) + ": this engine imports only up to "
                    + Long.toUnsignedString(MAX_IMPORTED_SEQUENCE) + ", so that 2^32 events remain for it to go on");
        }
        if (tx.lastSequence() != s.lastSequence() || !tx.runId().equals(runId)) {
            throw refused(ImportRefusedException.Reason.MALFORMED, "the helper prepared another run or sequence than the envelope's");
        }
        if (seen(runId)) {
            throw refused(ImportRefusedException.Reason.ALREADY_IMPORTED, "run " + runId + " was already started or imported by this engine");
        }
        if (!identity.importable()) {
            throw refused(ImportRefusedException.Reason.NOT_IMPORTABLE,
                    "this engine has no compatibility identity: import requires an explicit generated compatibility identity");
        }
        PlanIdentity recorded = s.planIdentity();
        if (recorded.snapshotCompatibilityIdentity().isEmpty()) {
            throw refused(ImportRefusedException.Reason.NOT_IMPORTABLE,
                    "run " + runId + " was exported by a convenience engine: import requires an explicit generated compatibility identity");
        }
        // Static compatibility before any lease (nothing dynamic is launched on a mismatch).
        if (!recorded.snapshotCompatibilityIdentity().equals(identity.compatibilityIdentity())
                || !recorded.compiledIdentities().equals(identity.compiledIdentities())) {
            throw refused(ImportRefusedException.Reason.INCOMPATIBLE,
                    "run " + runId + " was exported by an engine with another compatibility or compiled identity");
        }
        ToolPlanSource.Lease lease;
        try {
            lease = plans.lease(recorded.toolPlanId());
        } catch (ToolPlanSource.PlanUnavailableException e) {
            throw refused(ImportRefusedException.Reason.PLAN_MISSING,
                    "the recorded tool plan " + recorded.toolPlanId() + " cannot be leased: " + e.getMessage());
        }
        try {
            if (!recorded.toolPlanId().equals(lease.planId())) {
                throw refused(ImportRefusedException.Reason.PLAN_SUBSTITUTED,
                        "the plan source leased " + lease.planId() + " instead of the recorded " + recorded.toolPlanId());
            }
            PlanIdentity again;
            try {
                again = planIdentity(lease);
            } catch (IllegalArgumentException e) {
                throw refused(ImportRefusedException.Reason.PLAN_CHANGED, "the leased plan is not valid: " + e.getMessage());
            }
            if (!again.equals(recorded) || !PlanIdentities.matches(format, recorded, StaticToolPlan.definitions(lease.tools()))) {
                throw refused(ImportRefusedException.Reason.PLAN_CHANGED,
                        "the recomputed plan identity of " + recorded.toolPlanId() + " differs from the recorded one: a tool definition changed");
            }
            // Checked again and reserved: from here a start or import of the same ID is refused.
            synchronized (this) {
                if (closed) {
                    throw refused(ImportRefusedException.Reason.ENGINE_CLOSED, "the engine is closed");
                }
                if (!seenRunIds.add(runId)) {
                    throw refused(ImportRefusedException.Reason.ALREADY_IMPORTED,
                            "run " + runId + " was already started or imported by this engine");
                }
            }
            return lease;
        } catch (ImportRefusedException | RuntimeException e) {
            lease.release();
            throw e;
        }
    }

    private static String workspaceText(String workspaceFingerprint) {
        return workspaceFingerprint.isEmpty() ? "none" : workspaceFingerprint;
    }

    /** The plan identity of this engine's format, identity and workspace for the tools of {@code lease}. */
    private PlanIdentity planIdentity(ToolPlanSource.Lease lease) {
        return PlanIdentities.planIdentity(format, identity.compiledIdentities(), lease.planId(),
                identity.compatibilityIdentity(), identity.workspaceFingerprint(), StaticToolPlan.definitions(lease.tools()));
    }

    private static ImportRefusedException refused(ImportRefusedException.Reason r, String message) {
        return new ImportRefusedException(r, message, null);
    }

    private void abortQuietly(ImportView tx, Exception primary) {
        try {
            CleanUp.uninterrupted(() -> authority.abortImport(tx));
        } catch (IOException e) {
            if (primary == null) {
                return;
            }
            // After consume the helper answers uncertain and keeps the run fenced; the primary
            // failure already says so. Before consume an abort failure leaves the prepared import
            // to end with this session.
            primary.addSuppressed(e);
        }
    }

    /**
     * Stops and joins every run; the engine takes no new work. Runs that were RUNNING stay ACTIVE
     * at the helper until this host's session ends; suspend them first to hand them on (a
     * suspended run still gives its envelope through {@link Run#export()}).
     */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        List<Run> all = new ArrayList<>(runs.values());
        for (Run r : all) {
            r.stopAndJoin();
        }
        if (ownedSession != null) {
            try {
                ownedSession.close();
            } catch (Exception e) {
                // The helper ends the session when this process exits; nothing else to do here.
            }
        }
    }

    @Override
    public String toString() {
        return "Engine[" + identity + ", " + format.version() + ", runs=" + runs.size() + "]";
    }
}
