package spice.authority.host.store;

import java.io.IOException;
import java.security.MessageDigest;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import spice.authority.host.HelperProblem;
import spice.authority.host.HelperTransportException;
import spice.authority.host.RunView;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.EngineException;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.ImportRefusedException;
import spice.authority.host.engine.ImportUncertainException;
import spice.authority.host.engine.Recorder;
import spice.authority.host.engine.Run;
import spice.authority.host.store.RecoveryDecision.CutOffCall;
import spice.authority.host.store.RecoveryDecision.Outcome;
import spice.authority.host.store.RecoveryDecision.Reason;
import spice.authority.snapshot.contract.ProblemCode;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.payload.Snapshot;

/**
 * One {@link HostStore#recover}: for each run of the store that is not over, in run-ID order.
 *
 * <ol>
 *   <li>Integrity first, refused rather than guessed: at most {@link HostStore#MAX_EVENTS_PER_RUN}
 *       events, consecutive from the run's first, each digest chained to the one before, the last
 *       equal to the run's; every tool operation agreeing with its start and terminal events.
 *   <li>A run whose last checkpoint is a SUSPENDED payload at (signed) or right after (pending: the
 *       crash came between the payload's commit and the envelope's) its last event: the
 *       checkpoint's digest, run ID, sequence and status must agree with the run, the payload must
 *       validate, and its plan identity must be the run's and this engine's. A pending one is
 *       re-issued by the helper (the identical payload gives the identical envelope); then the
 *       envelope is imported through the helper, which proves the old owner dead, and the run
 *       goes on at {@code last_sequence + 1}, its earlier events served from the store.
 *   <li>A run ACTIVE at the crash is never resumed (the authority refuses ACTIVE imports): it is
 *       reported with the tool call the crash cut off (a ToolCallStarted with no terminal event:
 *       never "failed", never run again) or with its last checkpoint, and the operator's command.
 *   <li>A run that the helper shows over (abandoned, ended, never started) is resolved and not
 *       reported again.
 * </ol>
 */
final class Recovery {
    private final HostStore store;
    private final Engine engine;

    Recovery(HostStore store, Engine engine) {
        this.store = store;
        this.engine = engine;
    }

    /** A restore hazard: refused with its reason. */
    private static final class Hazard extends Exception {
        private static final long serialVersionUID = 1L;
        final Reason reason;

        Hazard(Reason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }
    }

    List<RecoveryDecision> run() throws StoreException {
        List<HostStore.StoredRun> open = new ArrayList<>();
        try (PreparedStatement ps = store.db().prepareStatement("SELECT run_id FROM runs WHERE phase NOT IN "
                + "('ABANDONED', 'ENDED', 'NEVER_STARTED') ORDER BY run_id")) {
            try (ResultSet r = ps.executeQuery()) {
                List<String> ids = new ArrayList<>();
                while (r.next()) {
                    ids.add(r.getString(1));
                }
                for (String id : ids) {
                    open.add(store.readRun(id));
                }
            }
        } catch (SQLException e) {
            throw new StoreException("cannot read the runs of " + store.file() + ": " + e.getMessage(), e);
        }
        List<RecoveryDecision> out = new ArrayList<>();
        for (HostStore.StoredRun run : open) {
            RecoveryDecision d;
            try {
                d = decide(run);
            } catch (Hazard h) {
                d = new RecoveryDecision(run.runId(), Outcome.REFUSED, h.reason, h.getMessage(), null, null, null, null);
            } catch (SQLException | RuntimeException e) {
                store.poison("recovery failed: " + e.getMessage());
                d = new RecoveryDecision(run.runId(), Outcome.REFUSED, Reason.STORAGE_FAILURE,
                        "the store could not be read: " + e.getMessage(), null, null, null, null);
            }
            if (d == null) {
                continue; // over, with a clean terminal: nothing to decide
            }
            keep(d);
            out.add(d);
        }
        return out;
    }

    private RecoveryDecision decide(HostStore.StoredRun run) throws Hazard, SQLException {
        List<Event> events = checkEvents(run);
        checkOperations(run, events);
        HostStore.StoredCheckpoint last = lastCheckpoint(run.runId());
        Long lastSeq = last == null ? null : last.sequence();
        boolean terminalPhase = RunPhase.parse(run.phase()).map(RunPhase::isTerminal).orElse(false);
        if (terminalPhase && last != null && last.state().equals("signed") && !last.status().equals("suspended")) {
            return null; // ended, with its envelope: over
        }
        if (last != null && last.status().equals("suspended") && !last.state().equals("superseded")
                && (last.sequence() == run.lastSequence() && RunPhase.SUSPENDED.name().equals(run.phase()) && last.state().equals("signed")
                        || last.sequence() == run.lastSequence() + 1 && last.state().equals("pending"))) {
            return resume(run, last);
        }
        if (RunPhase.SUSPENDED.name().equals(run.phase())) {
            throw new Hazard(Reason.MISSING_CHECKPOINT, "run " + run.runId() + " is SUSPENDED at "
                    + Long.toUnsignedString(run.lastSequence()) + " with no checkpoint there");
        }
        // ACTIVE, STARTING, a FAILED run with an unresolved call, or a terminal whose envelope was lost.
        return atHelper(run, events.isEmpty(), lastSeq, terminalPhase, "");
    }

    /**
     * A run that cannot be resumed here: what the helper shows decides. Over there (abandoned,
     * ended, never started): resolved, and not reported again. Otherwise reported, with the cut-off
     * call or the last checkpoint and the operator's command.
     */
    private RecoveryDecision atHelper(HostStore.StoredRun run, boolean noEvents, Long lastSeq, boolean terminalPhase,
                                      String why) throws SQLException {
        RunView view;
        try {
            view = engine.helperView(run.runId());
            if (!view.runId().equals(run.runId())) {
                view = null;
            }
        } catch (HelperProblem.NotFound gone) {
            view = null;
        } catch (IOException e) {
            return reportActive(run, lastSeq, why + " (the helper could not be asked: " + e.getMessage() + ")");
        }
        if (view == null && noEvents) {
            setPhase(run.runId(), "NEVER_STARTED");
            return new RecoveryDecision(run.runId(), Outcome.RESOLVED, Reason.NEVER_STARTED, "run " + run.runId()
                    + " has no events and the helper has no record of it: its start was cut off before the helper",
                    null, lastSeq, null, null);
        }
        if (view != null && view.phase() == RunPhase.CANCELLED && !terminalPhase) {
            setPhase(run.runId(), "ABANDONED");
            return new RecoveryDecision(run.runId(), Outcome.RESOLVED, Reason.ABANDONED_AT_HELPER, "run " + run.runId()
                    + " was abandoned at the helper (CANCELLED)" + why, null, lastSeq, null, null);
        }
        if (view != null && view.phase().isTerminal()) {
            setPhase(run.runId(), "ENDED");
            return new RecoveryDecision(run.runId(), Outcome.RESOLVED, Reason.ENDED_AT_HELPER, "run " + run.runId()
                    + " ended at the helper (" + view.phase() + "); its envelope was lost and a terminal is not re-issued"
                    + why, null, lastSeq, null, null);
        }
        return reportActive(run, lastSeq, why);
    }

    /** A run the helper keeps ACTIVE: the cut-off call, or the last checkpoint; the operator's command. */
    private RecoveryDecision reportActive(HostStore.StoredRun run, Long lastSeq, String note)
            throws SQLException {
        String command = "spice-authority runs abandon " + run.runId();
        List<Inspection.OpenCall> open = Inspection.openCalls(store.db(), run.runId());
        if (!open.isEmpty()) {
            Inspection.OpenCall c = open.get(open.size() - 1);
            CutOffCall cut = new CutOffCall(c.callId(), c.tool(), c.effect().equals("mutating"), c.replaySafety(),
                    c.startedSequence());
            return new RecoveryDecision(run.runId(), Outcome.REPORTED, Reason.CUT_OFF_TOOL_CALL, "run " + run.runId()
                    + " was inside tool call " + c.callId() + " (" + c.tool() + ", " + (cut.mutating() ? "mutating"
                    : "read-only") + ", started at " + Long.toUnsignedString(c.startedSequence()) + ") when its host "
                    + "stopped: the call's effect is unknown and it is never run again; the helper keeps the run ACTIVE, "
                    + "so only the operator ends it: " + command + note, cut, lastSeq, command, null);
        }
        return new RecoveryDecision(run.runId(), Outcome.REPORTED, Reason.ACTIVE_AT_CRASH, "run " + run.runId() + " was ACTIVE at "
                + Long.toUnsignedString(run.lastSequence()) + " with no open tool call when its host stopped"
                + (lastSeq != null ? "; its last checkpoint is at " + Long.toUnsignedString(lastSeq) : "; it has no checkpoint")
                + "; the helper refuses ACTIVE imports, so only the operator ends it: " + command + note,
                null, lastSeq, command, null);
    }

    private RecoveryDecision resume(HostStore.StoredRun run, HostStore.StoredCheckpoint c) throws Hazard, SQLException {
        String id = run.runId();
        if (!MessageDigest.isEqual(HostStore.sha256(c.payload()), c.payloadSha256())) {
            throw new Hazard(Reason.CHECKPOINT_DIGEST, "the checkpoint at " + Long.toUnsignedString(c.sequence())
                    + " of run " + id + " does not match its SHA-256");
        }
        Snapshot s;
        try {
            s = Snapshot.decode(c.payload());
        } catch (PayloadRejectedException e) {
            throw new Hazard(Reason.PAYLOAD_INVALID, "the checkpoint at " + Long.toUnsignedString(c.sequence()) + " of run "
                    + id + " no longer validates: " + e.getMessage());
        }
        if (!s.runId().equals(id) || s.lastSequence() != c.sequence() || s.status() != LifecycleStatus.SUSPENDED) {
            throw new Hazard(Reason.CHECKPOINT_MISMATCH, "the checkpoint at " + Long.toUnsignedString(c.sequence())
                    + " of run " + id + " is another run's, sequence's or status's payload");
        }
        if (s.format() != engine.format()) {
            throw new Hazard(Reason.FORMAT_MISMATCH, "the checkpoint of run " + id + " is " + s.format().wire()
                    + ", and this engine imports " + engine.format().wire() + " only: recover with an engine of the run's format");
        }
        PlanIdentity plan = s.planIdentity();
        if (!plan.fingerprint().equals(run.planFingerprint()) || !plan.toolPlanId().equals(run.toolPlanId())
                || !plan.snapshotCompatibilityIdentity().equals(run.compatibilityIdentity())) {
            throw new Hazard(Reason.PLAN_MISMATCH, "the checkpoint of run " + id + " carries another plan identity than "
                    + "the run's");
        }
        if (!plan.snapshotCompatibilityIdentity().equals(engine.identity().compatibilityIdentity())
                || !plan.compiledIdentities().equals(engine.identity().compiledIdentities())
                || !plan.workspaceFingerprint().equals(engine.identity().workspaceFingerprint())) {
            throw new Hazard(Reason.PLAN_MISMATCH, "run " + id + " was recorded by an engine with another compatibility or "
                    + "compiled identity or workspace than this one's");
        }
        byte[] envelope = c.envelope();
        Reason reason = Reason.SUSPENDED_CHECKPOINT;
        if (c.state().equals("signed")) {
            requireEnvelopeOf(id, c, envelope);
        } else {
            // The envelope was lost between the payload's commit and its own: ask the helper again.
            try {
                envelope = engine.reissue(id, c.payload());
            } catch (HelperTransportException e) {
                return new RecoveryDecision(id, Outcome.RETRY_LATER, Reason.HELPER_UNREACHABLE, "run " + id + ": the "
                        + "helper could not re-issue its checkpoint (" + e.getMessage() + "); recover again later",
                        null, c.sequence(), null, null);
            } catch (IOException e) {
                // The sign never took effect (the helper keeps the run ACTIVE, its owner gone), or the
                // run moved on there (abandoned meanwhile): the helper's view decides.
                HostStore.StoredRun again = store.readRun(id);
                RecoveryDecision d = atHelper(again, false, c.sequence(), false, "; the helper did not re-issue its "
                        + "checkpoint at " + Long.toUnsignedString(c.sequence()) + " (" + e.getMessage() + ")");
                if (d.outcome() != Outcome.REPORTED || d.reason() == Reason.CUT_OFF_TOOL_CALL) {
                    return d;
                }
                return new RecoveryDecision(id, Outcome.REPORTED, Reason.SIGN_NEVER_TOOK_EFFECT, "run " + id + ": the "
                        + "helper did not re-issue the checkpoint at " + Long.toUnsignedString(c.sequence()) + " ("
                        + e.getMessage() + "), so its sign never took effect and the run is ACTIVE there; only the operator "
                        + "ends it: spice-authority runs abandon " + id, null, c.sequence(), "spice-authority runs abandon " + id,
                        null);
            }
            requireEnvelopeOf(id, c, envelope);
            Event completing = c.sequence() == run.lastSequence() + 1
                    ? new Event(c.sequence(), id, Event.Type.RUN_SUSPENDED, 0, null, null, null) : null;
            try {
                store.signed(id, c.sequence(), envelope, completing);
            } catch (Recorder.RecordingException e) {
                return new RecoveryDecision(id, Outcome.REFUSED, Reason.STORAGE_FAILURE, "run " + id + ": its re-issued "
                        + "envelope could not be recorded: " + e.getMessage(), null, c.sequence(), null, null);
            }
            reason = Reason.REISSUED_CHECKPOINT;
        }
        Run resumed;
        try {
            resumed = engine.importRun(envelope, store.history(id, run.firstSequence()));
        } catch (ImportRefusedException e) {
            return importRefused(id, c.sequence(), e);
        } catch (ImportUncertainException e) {
            return new RecoveryDecision(id, Outcome.REPORTED, Reason.IMPORT_UNCERTAIN, e.getMessage(), null, c.sequence(),
                    "spice-authority runs show " + id, null);
        } catch (EngineException e) {
            return new RecoveryDecision(id, Outcome.REPORTED, Reason.IMPORT_REFUSED, e.getMessage(), null, c.sequence(),
                    null, null);
        }
        return new RecoveryDecision(id, Outcome.RESUMED, reason, "run " + id + " resumed from its checkpoint at "
                + Long.toUnsignedString(c.sequence()) + " at " + Long.toUnsignedString(c.sequence() + 1)
                + (reason == Reason.REISSUED_CHECKPOINT ? " (its envelope re-issued by the helper)" : ""),
                null, c.sequence(), null, resumed);
    }

    private RecoveryDecision importRefused(String id, long seq, ImportRefusedException e) throws SQLException {
        String code = e.helperCode();
        if (e.reason() == ImportRefusedException.Reason.FORMAT_MISMATCH) {
            return new RecoveryDecision(id, Outcome.REFUSED, Reason.FORMAT_MISMATCH, e.getMessage(), null, seq, null, null);
        }
        if (ProblemCode.BUSY.wire().equals(code)) {
            return new RecoveryDecision(id, Outcome.RETRY_LATER, Reason.OWNER_ALIVE, "run " + id + ": the helper refuses "
                    + "its import while its last owner lives; recover again once that host has stopped", null, seq, null, null);
        }
        if (e.reason() == ImportRefusedException.Reason.PLAN_CHANGED || e.reason() == ImportRefusedException.Reason.PLAN_MISSING
                || e.reason() == ImportRefusedException.Reason.PLAN_SUBSTITUTED
                || e.reason() == ImportRefusedException.Reason.INCOMPATIBLE
                || e.reason() == ImportRefusedException.Reason.WORKSPACE_MISMATCH) {
            return new RecoveryDecision(id, Outcome.REFUSED, Reason.PLAN_MISMATCH, e.getMessage(), null, seq, null, null);
        }
        if (code != null) {
            // The helper refused the envelope: has the run moved on there (a resume the store never recorded)?
            try {
                RunView v = engine.helperView(id);
                if (v.runId().equals(id) && v.phase() == RunPhase.CANCELLED) {
                    setPhase(id, "ABANDONED");
                    return new RecoveryDecision(id, Outcome.RESOLVED, Reason.ABANDONED_AT_HELPER, "run " + id
                            + " was abandoned at the helper (CANCELLED)", null, seq, null, null);
                }
                if (v.runId().equals(id) && v.phase() == RunPhase.ACTIVE) {
                    return new RecoveryDecision(id, Outcome.REPORTED, Reason.STALE_CHECKPOINT, "run " + id + ": the helper "
                            + "refused its checkpoint at " + Long.toUnsignedString(seq) + " (" + code + ") and shows the run "
                            + "ACTIVE at generation " + v.runGenerationText() + ": it was resumed after that checkpoint, "
                            + "which the store did not record; only the operator ends it: spice-authority runs abandon " + id,
                            null, seq, "spice-authority runs abandon " + id, null);
                }
            } catch (IOException ignored) {
                // reported as refused below
            }
        }
        return new RecoveryDecision(id, Outcome.REPORTED, Reason.IMPORT_REFUSED, e.getMessage(), null, seq,
                "spice-authority runs show " + id, null);
    }

    private static void requireEnvelopeOf(String id, HostStore.StoredCheckpoint c, byte[] envelope) throws Hazard {
        Envelope e;
        try {
            e = Envelope.parse(envelope);
        } catch (EnvelopeRejectedException x) {
            throw new Hazard(Reason.CHECKPOINT_MISMATCH, "the envelope of the checkpoint at "
                    + Long.toUnsignedString(c.sequence()) + " of run " + id + " does not parse: " + x.getMessage());
        }
        if (!e.runId().equals(id) || e.lastSequence() != c.sequence() || !Arrays.equals(e.payload(), c.payload())) {
            throw new Hazard(Reason.CHECKPOINT_MISMATCH, "the envelope of the checkpoint at "
                    + Long.toUnsignedString(c.sequence()) + " of run " + id + " is not the envelope of its payload");
        }
    }

    /** The run's events, checked: bound, consecutive, chained digests ending in the run's. */
    private List<Event> checkEvents(HostStore.StoredRun run) throws Hazard, SQLException {
        String id = run.runId();
        long count;
        try (PreparedStatement ps = store.db().prepareStatement("SELECT count(*) FROM events WHERE run_id = ?")) {
            ps.setString(1, id);
            try (ResultSet r = ps.executeQuery()) {
                count = r.next() ? r.getLong(1) : 0;
            }
        }
        if (count > HostStore.MAX_EVENTS_PER_RUN) {
            throw new Hazard(Reason.TOO_MANY_EVENTS, "run " + id + " holds " + count + " events, more than the "
                    + HostStore.MAX_EVENTS_PER_RUN + " a recovery trusts");
        }
        List<Event> events = new ArrayList<>();
        byte[] previous = HostStore.genesis();
        long expected = run.firstSequence();
        try (PreparedStatement ps = store.db().prepareStatement("SELECT sequence, kind, turn, call_id, message_id, tool, "
                + "digest FROM events WHERE run_id = ? ORDER BY sequence")) {
            ps.setString(1, id);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    long seq = r.getLong(1);
                    if (seq != expected) {
                        throw new Hazard(Reason.EVENT_CHAIN, "run " + id + " has a gap in its events: "
                                + Long.toUnsignedString(seq) + " where " + Long.toUnsignedString(expected) + " belongs");
                    }
                    Event e;
                    try {
                        e = new Event(seq, id, HostStore.type(r.getString(2)), r.getInt(3), r.getString(4),
                                r.getString(5), r.getString(6));
                    } catch (IllegalArgumentException | NullPointerException x) {
                        throw new Hazard(Reason.EVENT_CHAIN, "run " + id + " has an unreadable event at "
                                + Long.toUnsignedString(seq));
                    }
                    byte[] d = HostStore.digest(previous, e);
                    byte[] stored = r.getBytes(7);
                    if (stored == null || !MessageDigest.isEqual(d, stored)) {
                        throw new Hazard(Reason.EVENT_CHAIN, "run " + id + " has a bad digest at event "
                                + Long.toUnsignedString(seq));
                    }
                    previous = d;
                    events.add(e);
                    expected = seq + 1;
                }
            }
        }
        if (expected - 1 != run.lastSequence()) {
            throw new Hazard(Reason.EVENT_CHAIN, "run " + id + " ends at event " + Long.toUnsignedString(expected - 1)
                    + " but records its last as " + Long.toUnsignedString(run.lastSequence()));
        }
        if (!MessageDigest.isEqual(previous, run.lastDigest())) {
            throw new Hazard(Reason.EVENT_CHAIN, "run " + id + ": its last digest disagrees with its events");
        }
        return events;
    }

    /** Every tool operation agrees with its ToolCallStarted and terminal events, and each start has one. */
    private void checkOperations(HostStore.StoredRun run, List<Event> events) throws Hazard, SQLException {
        String id = run.runId();
        java.util.Map<String, Event> started = new java.util.HashMap<>();
        java.util.Map<String, Event> completed = new java.util.HashMap<>();
        for (Event e : events) {
            if (e.type() == Event.Type.TOOL_CALL_STARTED) {
                started.put(e.callId(), e);
            } else if (e.type() == Event.Type.TOOL_CALL_COMPLETED) {
                completed.put(e.callId(), e);
            }
        }
        int rows = 0;
        try (PreparedStatement ps = store.db().prepareStatement("SELECT call_id, tool, start_sequence, terminal_sequence, "
                + "terminal_kind FROM tool_operations WHERE run_id = ?")) {
            ps.setString(1, id);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    rows++;
                    String call = r.getString(1);
                    Event s = started.get(call);
                    long terminal = r.getLong(4);
                    boolean open = r.wasNull();
                    Event t = completed.get(call);
                    if (s == null || !s.toolName().equals(r.getString(2)) || s.sequence() != r.getLong(3)
                            || (open ? t != null : t == null || t.sequence() != terminal
                                    || !"completed".equals(r.getString(5)))) {
                        throw new Hazard(Reason.OPERATION_MISMATCH, "run " + id + ": the tool operation of call " + call
                                + " disagrees with its events");
                    }
                }
            }
        }
        if (rows != started.size()) {
            throw new Hazard(Reason.OPERATION_MISMATCH, "run " + id + " has " + started.size() + " tool starts but "
                    + rows + " tool operations");
        }
    }

    private HostStore.StoredCheckpoint lastCheckpoint(String runId) throws SQLException {
        try (PreparedStatement ps = store.db().prepareStatement(
                "SELECT sequence FROM checkpoints WHERE run_id = ? ORDER BY sequence DESC LIMIT 1")) {
            ps.setString(1, runId);
            try (ResultSet r = ps.executeQuery()) {
                return r.next() ? store.readCheckpoint(runId, r.getLong(1)) : null;
            }
        }
    }

    private void setPhase(String runId, String phase) throws SQLException {
        try (PreparedStatement ps = store.db().prepareStatement("UPDATE runs SET phase = ? WHERE run_id = ?")) {
            ps.setString(1, phase);
            ps.setString(2, runId);
            ps.executeUpdate();
        }
    }

    private void keep(RecoveryDecision d) {
        try (PreparedStatement ps = store.db().prepareStatement("INSERT INTO recovery_decisions (epoch, run_id, decision, "
                + "reason, detail, decided_at) VALUES (?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, store.epochId());
            ps.setString(2, d.runId());
            ps.setString(3, d.outcome().name().toLowerCase(java.util.Locale.ROOT));
            ps.setString(4, d.reason().code());
            ps.setString(5, d.detail());
            ps.setLong(6, System.currentTimeMillis());
            ps.executeUpdate();
        } catch (SQLException e) {
            store.poison("a recovery decision could not be kept: " + e.getMessage());
        }
    }
}
