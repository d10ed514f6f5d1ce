package spice.authority.host.engine;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import spice.authority.host.HelperProblem;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.payload.Definition;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.payload.Role;
import spice.authority.snapshot.payload.Snapshot;

/**
 * One run of an {@link Engine}: its event log, history and authority lease.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>A turn runs only while the run holds an active authority lease (started, resumed or
 *       activated at the helper); after a stop, a failure or a terminal nothing runs again. A
 *       helper answer that shows the lease is gone (an unknown session, a run the session does
 *       not own) stops the run.
 *   <li>Export only at a completed turn boundary (suspended, with a turn left) or after a
 *       terminal; {@link #suspend()} commits RunSuspended, then the helper signs the payload whose
 *       {@code last_sequence} is that event.
 *   <li>Local resume writes ACTIVE at the helper first; only then does the run continue.
 *   <li>Generated IDs are run-scoped: model operations {@code <run>/model/<turn>}, messages
 *       {@code <run>/message/<N>} with N the sequence the next event gets, so a resumed run in a
 *       fresh process never reproduces an earlier ID; a collision, or a model-supplied call ID
 *       seen before, fails the run; so does a call ID or tool name the tool layer's text rules
 *       refuse (not valid UTF-8, or NUL, CR, LF or TAB anywhere), or arguments that are not valid
 *       UTF-8, before any tool of the round runs, and a result that is not valid UTF-8.
 *   <li>A tool call is run once. If it throws, the run fails with the call unresolved: no snapshot
 *       can carry it, the run stays ACTIVE at the helper and needs the operator.
 * </ul>
 * Thread-safe; turns of one run are serialized.
 */
public final class Run {
    /** The run's local phase. */
    public enum Phase { STARTING, RUNNING, IN_TURN, SUSPENDED, COMPLETED, FAILED, CANCELLED, STOPPED }

    /** Upper bound of tool rounds in one turn. */
    static final int MAX_ROUNDS_PER_TURN = 32;

    private final Engine engine;
    private final String runId;
    private final Definition definition;
    private final EventLog log;
    private final List<Message> history;
    private final Set<String> messageIds = new HashSet<>();
    private final Set<String> callIds = new HashSet<>();
    private final List<String> seenInteractionIds;
    private final ReentrantLock turnLock = new ReentrantLock();
    private PlanIdentity planIdentity;
    private ToolPlanSource.Lease toolLease;
    private Map<String, Tool> tools = Map.of();
    private int completedTurns;
    private volatile Phase phase = Phase.STARTING;
    private volatile boolean stopRequested;
    private boolean authorityLease;
    private byte[] envelope;
    private byte[] pendingPayload;
    /**
     * Whether an earlier sign of {@link #pendingPayload} may have taken effect. For a terminal that
     * stays true whatever a repeat answers: the lease ends with the tombstone, so a repeat after a
     * written terminal is refused, which proves nothing about the first attempt.
     */
    private boolean pendingMayHaveTakenEffect;
    /** The answer to a local resume was lost and the lease handed back: it is never resumed here. */
    private boolean resumeLost;
    /** The last_sequence of {@link #pendingPayload}. */
    private long pendingSequence;
    /** The RunSuspended event of a suspend whose sign's outcome is unknown (not yet recorded), or null. */
    private Event pendingEvent;

    Run(Engine engine, String runId, Definition definition, long firstSequence, List<Message> history,
        int completedTurns, List<String> seenInteractionIds) {
        this(engine, runId, definition, firstSequence, history, completedTurns, seenInteractionIds, null);
    }

    Run(Engine engine, String runId, Definition definition, long firstSequence, List<Message> history,
        int completedTurns, List<String> seenInteractionIds, EventHistory older) {
        this.engine = engine;
        this.runId = runId;
        this.definition = definition;
        this.log = new EventLog(firstSequence, engine.logCapacity(), older);
        this.history = new ArrayList<>(history);
        for (Message m : history) {
            messageIds.add(m.id());
            for (Part p : m.parts()) {
                if (p instanceof Part.ToolCall c) {
                    callIds.add(c.callId());
                }
            }
        }
        this.completedTurns = completedTurns;
        this.seenInteractionIds = List.copyOf(seenInteractionIds);
        for (EventListener l : engine.listeners()) {
            log.listen(l);
        }
    }

    public String runId() {
        return runId;
    }

    public Definition definition() {
        return definition;
    }

    public Phase phase() {
        return phase;
    }

    public int completedTurns() {
        turnLock.lock();
        try {
            return completedTurns;
        } finally {
            turnLock.unlock();
        }
    }

    /** The run's event log (subscriptions read from it). */
    public EventLog events() {
        return log;
    }

    /** A copy of the provider-neutral history. */
    public List<Message> history() {
        turnLock.lock();
        try {
            return List.copyOf(history);
        } finally {
            turnLock.unlock();
        }
    }

    /** The run's plan identity (compiled identities, compatibility, plan ID, fingerprint). */
    public PlanIdentity planIdentity() {
        return planIdentity;
    }

    // ---- life cycle used by the engine --------------------------------------------------------

    void bind(PlanIdentity identity, ToolPlanSource.Lease lease) {
        this.planIdentity = identity;
        this.toolLease = lease;
        Map<String, Tool> byName = new HashMap<>();
        for (Tool t : lease.tools()) {
            byName.put(t.definition().name(), t);
        }
        this.tools = Map.copyOf(byName);
    }

    /**
     * A new run whose helper start returned: RunStarted, then the first user message. False when
     * the run was stopped meanwhile (the engine closed after registering it): it then never runs,
     * and the caller releases the helper's lease.
     */
    boolean started(Message firstUserMessage) throws RecordFailedException {
        return takeLease(Event.Type.RUN_STARTED, firstUserMessage);
    }

    /**
     * An imported run whose activate returned: RunResumed at {@code last_sequence + 1}. False
     * when the run was stopped meanwhile (it then never runs).
     */
    boolean activated() throws RecordFailedException {
        return takeLease(Event.Type.RUN_RESUMED, null);
    }

    /** The helper's lease taken: RUNNING, {@code first} event, then {@code firstUserMessage} if any. */
    private boolean takeLease(Event.Type first, Message firstUserMessage) throws RecordFailedException {
        turnLock.lock();
        try {
            // RACE: close() may stop the run between its registration and here; stopAndJoin holds
            // the same lock, so either the stop is seen here or it comes after and stops a RUNNING run.
            if (stopRequested) {
                return false;
            }
            authorityLease = true;
            phase = Phase.RUNNING;
            append(first, 0, null, null, null);
            if (firstUserMessage != null) {
                history.add(firstUserMessage);
                messageIds.add(firstUserMessage.id());
                append(Event.Type.MESSAGE_APPENDED, 0, null, firstUserMessage.id(), null);
            }
            return true;
        } finally {
            turnLock.unlock();
        }
    }

    /**
     * Stops the run and joins any turn in progress: after this returns nothing of the run executes
     * again. Idempotent; releases the tool plan lease. A SUSPENDED run stays SUSPENDED (it does not
     * execute, and it never resumes here again) so that {@link #export()} still gives its envelope:
     * the helper keeps it importable once this host is gone, and only this run can still ask for it
     * when the signing answer was lost.
     */
    public void stopAndJoin() {
        stopRequested = true;
        turnLock.lock(); // joins: a turn in progress holds the lock until it ends
        try {
            authorityLease = false;
            if (phase == Phase.STARTING || phase == Phase.RUNNING || phase == Phase.IN_TURN) {
                phase = Phase.STOPPED;
            }
            releaseToolLease();
        } finally {
            turnLock.unlock();
        }
    }

    private void releaseToolLease() {
        if (toolLease != null) {
            toolLease.release();
        }
    }

    // ---- turns --------------------------------------------------------------------------------

    /**
     * Runs the next turn to its end: the model, and each tool call it asks for, once.
     *
     * @throws RunStateException when the run holds no active lease or is not between turns
     * @throws RunFailedException when the turn failed; the run is FAILED
     */
    public void runTurn() throws EngineException {
        turnLock.lock();
        try {
            requireRunning("run a turn");
            if (completedTurns >= definition.maxTurns()) {
                throw fail("the turn limit " + definition.maxTurns() + " is reached", null);
            }
            int turn = completedTurns + 1;
            phase = Phase.IN_TURN;
            append(Event.Type.TURN_STARTED, turn, null, null, null);
            String operationId = runId + "/model/" + turn;
            for (int round = 0; ; round++) {
                if (stopRequested) {
                    throw new RunStateException("run " + runId + " was stopped during turn " + turn);
                }
                if (round >= MAX_ROUNDS_PER_TURN) {
                    throw fail("turn " + turn + " exceeded " + MAX_ROUNDS_PER_TURN + " tool rounds", null);
                }
                Model.Reply reply;
                try {
                    reply = engine.model().respond(new Model.Request(operationId, runId, turn, history));
                } catch (Exception e) {
                    throw fail("the model failed in turn " + turn, e);
                }
                if (stopRequested) {
                    // A stop takes effect between rounds: nothing of this reply is recorded or run.
                    throw new RunStateException("run " + runId + " was stopped during turn " + turn);
                }
                switch (reply) {
                    case Model.Reply.Final f -> {
                        completedTurns = turn;
                        phase = Phase.RUNNING;
                        append(Event.Type.TURN_COMPLETED, turn, null, null, null);
                        return;
                    }
                    case Model.Reply.ToolRound r -> toolRound(turn, r);
                }
            }
        } finally {
            turnLock.unlock();
        }
    }

    /** After a lost resume answer: whether the helper shows this session's lease held. */
    private boolean resumedAtHelper() {
        try {
            spice.authority.host.RunView v = engine.authority().inspect(runId);
            return runId.equals(v.runId()) && leaseHeld(v);
        } catch (IOException unknown) {
            return false;
        }
    }

    /**
     * Whether the helper's view of this run shows this session's lease: ACTIVE, owned and not
     * fenced. An ACTIVE run cannot be owned by another session (import refuses it, a start needs
     * no record), so owned means this one.
     */
    private boolean leaseHeld(spice.authority.host.RunView v) {
        return v.phase() == RunPhase.ACTIVE && v.owned() && !v.fenced();
    }

    /**
     * SECURITY: a host that lost its lease must stop executing the run (ARCHITECTURE "Sessions and
     * leases"). A sign tells the engine; before a tool round's calls (the run's side effects) so
     * does the helper's view of the run, which must name this run, ACTIVE, owned and not fenced.
     * An ACTIVE run cannot be owned by another session (import refuses it, a start needs no
     * record), so anything else proves this session's lease gone: a helper that restarted, an
     * operator's abandon. An answer that cannot be used (another run's view, a malformed or lost
     * answer, a code this engine does not know) proves nothing either way, so the run stops too.
     * Only a helper that cannot be reached (nothing was sent) or answers {@code unavailable} (it
     * could not look) lets the round go on: every way into a round passed a checked grant or a
     * held check, so the last answer the helper gave proved the lease.
     */
    private void requireLeaseAtHelper(int turn) throws EngineException {
        String seen;
        try {
            spice.authority.host.RunView v = engine.authority().inspect(runId);
            if (!runId.equals(v.runId())) {
                throw stopUnusable(turn, new spice.authority.host.HelperProtocolError("it names another run"));
            } else if (leaseHeld(v)) {
                return;
            } else {
                seen = v.phase() + (v.owned() ? ", owned" : ", owned by no session") + (v.fenced() ? ", fenced" : "");
            }
        } catch (HelperProblem.NotFound gone) {
            seen = "with no record";
        } catch (spice.authority.host.HelperTimeout | spice.authority.host.HelperProtocolError unusable) {
            throw stopUnusable(turn, unusable);
        } catch (spice.authority.host.HelperTransportException | HelperProblem.Unavailable unreachable) {
            return; // nothing was sent, or the helper could not look: the last answer proved the lease
        } catch (IOException unusable) {
            throw stopUnusable(turn, unusable);
        }
        stopAndJoin();
        throw new RunStateException("run " + runId + " was stopped in turn " + turn + " before its tool calls: the helper "
                + "shows it " + seen + ", so this session no longer holds its lease (a restarted helper, or an operator's "
                + "abandon); a host that lost its lease must not go on");
    }

    private RunStateException stopUnusable(int turn, IOException unusable) {
        stopAndJoin();
        return new RunStateException("run " + runId + " was stopped in turn " + turn + " before its tool calls: the "
                + "helper's answer to the lease check cannot be used (" + unusable.getMessage() + "), so this session "
                + "cannot tell that it still holds the run's lease");
    }

    private void toolRound(int turn, Model.Reply.ToolRound round) throws EngineException {
        List<Part> parts = new ArrayList<>();
        if (!round.text().isEmpty()) {
            parts.add(new Part.Text(round.text()));
        }
        Set<String> roundIds = new HashSet<>();
        for (Model.ToolCall c : round.calls()) {
            // The tool layer's text rules, before the call ID or name is used for anything.
            String idProblem = ToolText.problem(c.callId());
            if (idProblem != null) {
                throw fail("the model's call ID " + ToolText.shown(c.callId()) + " " + idProblem, null);
            }
            String nameProblem = ToolText.problem(c.toolName());
            if (nameProblem != null) {
                throw fail("the model called tool " + ToolText.shown(c.toolName()) + ", whose name " + nameProblem, null);
            }
            if (!ToolText.isUtf8(c.arguments().rawBytes())) {
                throw fail("the arguments of the model's call " + c.callId() + " are not valid UTF-8", null);
            }
            if (callIds.contains(c.callId()) || !roundIds.add(c.callId())) {
                throw fail("the model reused call ID " + c.callId(), null);
            }
            if (!tools.containsKey(c.toolName())) {
                throw fail("the model called " + c.toolName() + ", which the leased plan does not have", null);
            }
            parts.add(new Part.ToolCall(c.toolName(), c.callId(), c.arguments()));
        }
        Message assistant = new Message(nextMessageId(), Role.ASSISTANT, parts);
        requireExportable(turn, assistant, round.calls());
        requireLeaseAtHelper(turn);
        appendMessage(turn, assistant);
        callIds.addAll(roundIds);
        for (Model.ToolCall c : round.calls()) {
            append(Event.Type.TOOL_CALL_STARTED, turn, c.callId(), null, c.toolName());
            JsonValue result;
            try {
                result = tools.get(c.toolName()).call(runId, c.callId(), c.arguments());
            } catch (Exception e) {
                // The call stays unresolved: no snapshot can carry this run, and it is never replayed.
                throw fail("tool " + c.toolName() + " failed in call " + c.callId(), e);
            }
            if (result == null) {
                throw fail("tool " + c.toolName() + " returned no result in call " + c.callId(), null);
            }
            if (!ToolText.isUtf8(result.rawBytes())) {
                // As a result the snapshot cannot carry: the call ran, stays unresolved, never replayed.
                throw fail("tool " + c.toolName() + " returned a result that is not valid UTF-8 in call " + c.callId(), null);
            }
            Message toolMessage = new Message(nextMessageId(), Role.TOOL, List.of(new Part.ToolResult(c.toolName(), c.callId(), result)));
            try {
                trialPayload(toolMessage);
            } catch (PayloadRejectedException e) {
                // The call ran but its result cannot be recorded: it stays unresolved, never replayed.
                throw fail("tool " + c.toolName() + " returned a result the snapshot cannot carry in call " + c.callId()
                        + ": " + e.getMessage(), null);
            }
            append(Event.Type.TOOL_CALL_COMPLETED, turn, c.callId(), null, c.toolName());
            appendMessage(turn, new Message(nextMessageId(), Role.TOOL, toolMessage.parts()));
        }
    }

    /** {@code <run>/message/<N>}, N the sequence the next event gets. */
    private String nextMessageId() {
        return runId + "/message/" + Long.toUnsignedString(log.next());
    }

    private void appendMessage(int turn, Message m) throws RunFailedException, RecordFailedException {
        if (!m.id().equals(nextMessageId()) || !messageIds.add(m.id())) {
            throw fail("generated message ID " + m.id() + " collides with existing history", null);
        }
        history.add(m);
        append(Event.Type.MESSAGE_APPENDED, turn, null, m.id(), null);
    }

    /**
     * Commits the run's next event once the engine's recorder made it durable. When the recorder
     * fails, the run stops before anything else of it executes.
     */
    private Event append(Event.Type type, int turn, String callId, String messageId, String toolName)
            throws RecordFailedException {
        Event e = log.peek(runId, type, turn, callId, messageId, toolName);
        try {
            engine.recorder().event(e);
        } catch (Recorder.RecordingException | RuntimeException x) {
            throw storeFailed("its " + type.display() + " event " + Long.toUnsignedString(e.sequence())
                    + " could not be recorded", x);
        }
        log.commit(e);
        return e;
    }

    /** Records a checkpoint's payload before it is signed. */
    private void recordPending(long sequence, LifecycleStatus status, byte[] payload) throws RecordFailedException {
        try {
            engine.recorder().pending(runId, sequence, status, payload);
        } catch (Recorder.RecordingException | RuntimeException x) {
            throw storeFailed("its checkpoint at " + Long.toUnsignedString(sequence) + " could not be recorded before "
                    + "signing", x);
        }
    }

    /** Records the envelope of the checkpoint at {@code sequence} (and the event it completes). */
    private void recordSigned(long sequence, byte[] env, Event completing) throws RecordFailedException {
        try {
            engine.recorder().signed(runId, sequence, env, completing);
        } catch (Recorder.RecordingException | RuntimeException x) {
            throw storeFailed("the envelope of its checkpoint at " + Long.toUnsignedString(sequence) + " could not be "
                    + "recorded (the store keeps its payload: recovery asks the helper for the envelope again)", x);
        }
    }

    /**
     * The store failed: the run stops before anything else of it executes, and its lease goes
     * back to the helper, so that the run is abandonable there (a SUSPENDED one stays importable).
     * Under turnLock.
     */
    private RecordFailedException storeFailed(String what, Exception cause) {
        boolean hadLease = authorityLease || phase == Phase.SUSPENDED;
        stopRequested = true;
        authorityLease = false;
        if (phase == Phase.STARTING || phase == Phase.RUNNING || phase == Phase.IN_TURN) {
            phase = Phase.STOPPED;
        }
        releaseToolLease();
        String lease = "";
        if (hadLease) {
            try {
                CleanUp.uninterrupted(() -> engine.authority().release(runId));
                lease = "; its lease was handed back";
            } catch (IOException e) {
                lease = "; handing its lease back failed (the session's end releases it)";
            }
        }
        return new RecordFailedException("run " + runId + " was stopped: " + what + " (" + cause.getMessage() + ")"
                + lease + "; 'spice-authority runs abandon " + runId + "' ends it at the helper", cause);
    }

    /**
     * Refuses, before any of its tools runs, a tool round the snapshot could not carry (IDs, part
     * counts, sizes: the payload rules of wire-format b.5): the run fails cleanly instead.
     */
    private void requireExportable(int turn, Message assistant, List<Model.ToolCall> calls) throws RunFailedException {
        List<Message> extra = new ArrayList<>();
        extra.add(assistant);
        for (Model.ToolCall c : calls) {
            // Each pending call resolved by an empty result: the rules see the round as complete.
            extra.add(new Message(assistant.id() + "/r" + extra.size(), Role.TOOL,
                    List.of(new Part.ToolResult(c.toolName(), c.callId(), JsonValue.of("{}")))));
        }
        try {
            trialPayload(extra.toArray(Message[]::new));
        } catch (PayloadRejectedException e) {
            throw fail("turn " + turn + ": the model's tool round cannot be recorded: " + e.getMessage(), null);
        }
    }

    /** Encodes and validates the history plus {@code extra} as a terminal payload; nothing changes. */
    private void trialPayload(Message... extra) throws PayloadRejectedException {
        Snapshot.Builder b = Snapshot.builder().format(engine.format()).runId(runId).definition(definition).completedTurns(completedTurns)
                .planIdentity(planIdentity).seenInteractionIds(seenInteractionIds).lastSequence(log.next())
                .status(LifecycleStatus.FAILED);
        for (Message m : history) {
            b.addMessage(m);
        }
        for (Message m : extra) {
            b.addMessage(m);
        }
        b.build();
    }

    private void requireRunning(String what) throws RunStateException {
        if (stopRequested || phase == Phase.STOPPED) {
            throw new RunStateException("cannot " + what + ": run " + runId + " was stopped");
        }
        if (!authorityLease) {
            throw new RunStateException("cannot " + what + ": run " + runId + " holds no active authority lease");
        }
        if (phase != Phase.RUNNING) {
            throw new RunStateException("cannot " + what + ": run " + runId + " is " + phase);
        }
    }

    /** Fails the run: RunFailed, a FAILED terminal at the helper when the history allows one. */
    private RunFailedException fail(String why, Exception cause) {
        phase = Phase.FAILED;
        try {
            append(Event.Type.RUN_FAILED, 0, null, null, null);
        } catch (RecordFailedException r) {
            // The store is gone: the helper keeps the run ACTIVE (its lease was handed back) for the
            // operator's abandon; no FAILED tombstone the store could not keep.
            return new RunFailedException("run " + runId + " failed: " + why + "; and " + r.getMessage(), cause);
        }
        releaseToolLease();
        boolean unresolved = hasUnresolvedCall();
        try {
            if (unresolved) {
                // The authority keeps the run ACTIVE: it cannot be exported or imported, and only
                // the operator ends it (runs abandon). Releasing says the host stopped.
                CleanUp.uninterrupted(() -> engine.authority().release(runId));
            } else {
                byte[] failed = payload(LifecycleStatus.FAILED, log.head());
                try {
                    recordPending(log.head(), LifecycleStatus.FAILED, failed);
                } catch (RecordFailedException r) {
                    return new RunFailedException("run " + runId + " failed: " + why + "; and " + r.getMessage(), cause);
                }
                pendingPayload = failed;
                pendingSequence = log.head();
                // A run often fails because its thread was interrupted: the tombstone is still
                // written (the interrupt is kept for the caller), or the helper would keep the run
                // ACTIVE and owned until the session ends.
                envelope = CleanUp.uninterrupted(() -> engine.authority().sign(runId, failed));
                pendingPayload = null;
                try {
                    recordSigned(log.head(), envelope, null);
                } catch (RecordFailedException r) {
                    why = why + "; and " + r.getMessage();
                }
            }
        } catch (IOException | PayloadRejectedException e) {
            if (e instanceof IOException io && pendingPayload != null) {
                pendingMayHaveTakenEffect = Authorities.outcomeUnknown(io);
            }
            why = why + " (and the helper was not told: " + e.getMessage() + ")";
        } catch (Error e) {
            if (pendingPayload != null) {
                pendingMayHaveTakenEffect = true;
            }
            authorityLease = false;
            throw e;
        }
        authorityLease = false;
        return new RunFailedException("run " + runId + " failed: " + why, cause);
    }

    private boolean hasUnresolvedCall() {
        Set<String> open = new HashSet<>();
        for (Message m : history) {
            for (Part p : m.parts()) {
                if (p instanceof Part.ToolCall c) {
                    open.add(c.callId());
                } else if (p instanceof Part.ToolResult r) {
                    open.remove(r.callId());
                }
            }
        }
        return !open.isEmpty();
    }

    // ---- suspend, export, resume, terminal ----------------------------------------------------

    /**
     * Suspends at this completed turn boundary and returns the signed envelope. The run keeps its
     * exclusive ownership at the helper; {@link #resumeLocal()} continues it here, or another
     * process imports the envelope once this one is dead.
     *
     * @throws ExportRefusedException mid-turn, before the first turn, with no turn left, or when not running
     * @throws AuthorityFailedException the helper did not sign: when it provably wrote nothing, the
     *     run goes on, unless the helper's answer shows the lease is gone (an unknown session, a
     *     run the session does not own, a closing helper): then it is stopped; when the outcome is
     *     unknown, the run is suspended here and {@link #export()} asks again (the same payload
     *     gives the same envelope)
     */
    public byte[] suspend() throws EngineException {
        turnLock.lock();
        try {
            if (phase != Phase.RUNNING || !authorityLease || stopRequested) {
                throw new ExportRefusedException("cannot suspend run " + runId + ": it is " + phase
                        + (authorityLease ? "" : " without an active lease") + ", not at a completed turn boundary");
            }
            if (completedTurns < 1 || completedTurns > definition.maxTurns() - 1) {
                throw new ExportRefusedException("cannot suspend run " + runId + " after " + completedTurns
                        + " of " + definition.maxTurns() + " turns: a suspended run has at least one completed turn and one left");
            }
            byte[] payload;
            long seq = log.next();
            try {
                // last_sequence is the RunSuspended event committed once the helper signed.
                payload = payload(LifecycleStatus.SUSPENDED, seq);
            } catch (PayloadRejectedException e) {
                throw new ExportRefusedException("run " + runId + " cannot be exported: " + e.getMessage());
            }
            recordPending(seq, LifecycleStatus.SUSPENDED, payload);
            try {
                envelope = engine.authority().sign(runId, payload);
            } catch (IOException e) {
                if (!Authorities.outcomeUnknown(e)) {
                    if (!Authorities.leaseLost(e)) {
                        // Provably nothing written, and no sign that the lease is gone: it goes on as before.
                        throw new AuthorityFailedException("the helper did not sign run " + runId, e);
                    }
                    // SECURITY: the helper no longer knows this session, or the session no longer owns
                    // the run (fenced): a host that lost its lease must stop executing the run.
                    // No release: when the lease is really gone the helper refuses it, and when this
                    // session still owns the run (a conflict of another kind) a release would leave it
                    // ACTIVE with no owner; the helper ends the lease with the session.
                    stopAndJoin();
                    throw new AuthorityFailedException("the helper did not sign run " + runId
                            + ", and this session no longer holds its lease; the run was stopped", e);
                }
                AuthorityFailedException failed = new AuthorityFailedException("the helper did not sign run " + runId, e);
                suspendedPerhapsSigned(payload);
                throw failed;
            } catch (Error e) {
                // No memory while the answer came in, say: the request may have reached the helper,
                // so the run never goes on here with a lease the helper may already have suspended.
                // (A RuntimeException arrives as an IOException of unknown outcome: GuardedAuthority.)
                suspendedPerhapsSigned(payload);
                throw e;
            }
            phase = Phase.SUSPENDED;
            Event suspended = log.peek(runId, Event.Type.RUN_SUSPENDED, 0, null, null, null);
            log.commit(suspended);
            byte[] signed = envelope.clone();
            recordSigned(seq, envelope, suspended);
            return signed;
        } finally {
            turnLock.unlock();
        }
    }

    /** Perhaps signed: never continue; export() asks again with the identical payload. Under turnLock. */
    private void suspendedPerhapsSigned(byte[] payload) {
        pendingPayload = payload;
        pendingSequence = log.next();
        pendingMayHaveTakenEffect = true;
        phase = Phase.SUSPENDED;
        authorityLease = false;
        // Recorded with the envelope once a sign answers (the store keeps the pending payload).
        pendingEvent = log.peek(runId, Event.Type.RUN_SUSPENDED, 0, null, null, null);
        log.commit(pendingEvent);
    }

    /**
     * The signed envelope of a suspended or terminal run (asking the helper again when an earlier
     * answer was lost).
     *
     * @throws ExportRefusedException when the run is active, mid-turn or stopped
     */
    public byte[] export() throws EngineException {
        turnLock.lock();
        try {
            LifecycleStatus status = switch (phase) {
                case SUSPENDED -> LifecycleStatus.SUSPENDED;
                case COMPLETED -> LifecycleStatus.COMPLETED;
                case CANCELLED -> LifecycleStatus.CANCELLED;
                case FAILED -> hasUnresolvedCall() ? null : LifecycleStatus.FAILED;
                default -> null;
            };
            if (status == null) {
                throw new ExportRefusedException("cannot export run " + runId + ": it is " + phase
                        + "; export needs a completed turn boundary (suspended) or a terminal without an unresolved tool call");
            }
            if (envelope != null) {
                return envelope.clone();
            }
            if (pendingPayload != null) {
                try {
                    envelope = engine.authority().sign(runId, pendingPayload);
                } catch (IOException e) {
                    if (status == LifecycleStatus.SUSPENDED || !pendingMayHaveTakenEffect) {
                        pendingMayHaveTakenEffect |= Authorities.outcomeUnknown(e);
                        throw new AuthorityFailedException("the helper did not sign run " + runId, e);
                    }
                    // A terminal whose first sign may have been written: the helper refuses a repeat
                    // once the tombstone ended the lease, so whether it was written stays unknown.
                    throw new AuthorityFailedException("the helper did not sign the end of run " + runId
                            + " again, and its first sign may have been written (a terminal's lease ends with it)", e, true);
                }
                pendingPayload = null;
                pendingMayHaveTakenEffect = false;
                byte[] signed = envelope.clone();
                Event completing = pendingEvent;
                pendingEvent = null;
                recordSigned(pendingSequence, envelope, completing);
                return signed;
            }
            return signCurrent(status);
        } finally {
            turnLock.unlock();
        }
    }

    /**
     * Local resume of a suspended run: ACTIVE at the next generation at the helper, then
     * RunResumed here. On a failure the run stays suspended (on {@code uncertain} it never
     * continues: only a stop releases it).
     */
    public void resumeLocal() throws EngineException {
        turnLock.lock();
        try {
            if (phase != Phase.SUSPENDED || stopRequested) {
                throw new RunStateException("cannot resume run " + runId + ": it is " + phase + ", not suspended");
            }
            if (resumeLost) {
                throw new RunStateException("cannot resume run " + runId + " here: the answer to an earlier resume was "
                        + "lost and its lease handed back; see 'spice-authority runs show " + runId + "'");
            }
            try {
                try {
                    engine.authority().resume(runId);
                } catch (Error e) {
                    // The resume may have reached the helper: never resumed here, nor again.
                    resumeLost = true;
                    throw e;
                }
            } catch (IOException e) {
                if (!Authorities.outcomeUnknown(e)) {
                    throw new AuthorityFailedException("the helper did not resume run " + runId, e);
                }
                // The answer was lost: ACTIVE at the next generation may be durable (the envelope no
                // longer verifies) or not. Only this session's lease can have made the run ACTIVE, so
                // the helper's view tells when it was: then the resume took effect and the run goes on.
                if (!resumedAtHelper()) {
                    // A second resume is refused either way. Not resumed here (no known lease).
                    resumeLost = true;
                    if (e instanceof HelperProblem.Uncertain) {
                        // The helper does not know either: it fences the run until it restarts.
                        throw new AuthorityFailedException("the resume of run " + runId + " is uncertain at the helper, "
                                + "which holds the run fenced until it restarts; then 'spice-authority runs show " + runId
                                + "' tells what was written; it is not resumed here", e);
                    }
                    // The lease goes back so that the run is not stranded while this session lives.
                    throw new AuthorityFailedException("the answer to the resume of run " + runId + " was lost; it is not "
                            + "resumed here" + engine.handBackAfterLostResume(runId), e);
                }
            }
            envelope = null; // the old claim is invalid now
            pendingPayload = null;
            pendingEvent = null;
            pendingMayHaveTakenEffect = false;
            authorityLease = true;
            phase = Phase.RUNNING;
            append(Event.Type.RUN_RESUMED, 0, null, null, null);
        } finally {
            turnLock.unlock();
        }
    }

    /** Completes the run at this turn boundary: RunCompleted, a COMPLETED tombstone; returns its envelope. */
    public byte[] complete() throws EngineException {
        return terminal(Phase.COMPLETED, Event.Type.RUN_COMPLETED, LifecycleStatus.COMPLETED);
    }

    /** Cancels the run at this turn boundary: RunCancelled, a CANCELLED tombstone; returns its envelope. */
    public byte[] cancel() throws EngineException {
        return terminal(Phase.CANCELLED, Event.Type.RUN_CANCELLED, LifecycleStatus.CANCELLED);
    }

    private byte[] terminal(Phase to, Event.Type event, LifecycleStatus status) throws EngineException {
        turnLock.lock();
        try {
            requireRunning("end the run");
            byte[] payload;
            long seq = log.next();
            try {
                payload = payload(status, seq);
            } catch (PayloadRejectedException e) {
                throw new ExportRefusedException("run " + runId + " cannot be exported: " + e.getMessage());
            }
            recordPending(seq, status, payload);
            append(event, 0, null, null, null);
            phase = to;
            authorityLease = false;
            releaseToolLease();
            try {
                envelope = engine.authority().sign(runId, payload);
            } catch (IOException e) {
                pendingPayload = payload; // export() asks again with the identical payload
                pendingSequence = seq;
                pendingMayHaveTakenEffect = Authorities.outcomeUnknown(e);
                throw new AuthorityFailedException("the helper did not sign the end of run " + runId, e);
            } catch (Error e) {
                // As in suspend(): the request may have reached the helper.
                pendingPayload = payload;
                pendingSequence = seq;
                pendingMayHaveTakenEffect = true;
                throw e;
            }
            byte[] signed = envelope.clone();
            recordSigned(seq, envelope, null);
            return signed;
        } finally {
            turnLock.unlock();
        }
    }

    private byte[] signCurrent(LifecycleStatus status) throws EngineException {
        byte[] payload;
        try {
            payload = payload(status, log.head());
        } catch (PayloadRejectedException e) {
            throw new ExportRefusedException("run " + runId + " cannot be exported: " + e.getMessage());
        }
        recordPending(log.head(), status, payload);
        try {
            envelope = engine.authority().sign(runId, payload);
        } catch (IOException e) {
            throw new AuthorityFailedException("the helper did not sign run " + runId, e);
        }
        byte[] signed = envelope.clone();
        recordSigned(log.head(), envelope, null);
        return signed;
    }

    /** The payload of the run as it stands, in the engine's format, with {@code last_sequence} given. */
    byte[] payload(LifecycleStatus status, long lastSequence) throws PayloadRejectedException {
        Snapshot.Builder b = Snapshot.builder()
                .format(engine.format())
                .runId(runId)
                .definition(definition)
                .completedTurns(completedTurns)
                .planIdentity(planIdentity)
                .seenInteractionIds(seenInteractionIds)
                .lastSequence(lastSequence)
                .status(status);
        for (Message m : history) {
            b.addMessage(m);
        }
        return b.build().canonicalBytes();
    }

    @Override
    public String toString() {
        return "Run[" + runId + ", " + phase + ", turns=" + completedTurns + ", head=" + Long.toUnsignedString(log.head()) + "]";
    }
}
