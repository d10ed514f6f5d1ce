package spice.authority.host.store;

import java.util.Locale;
import java.util.Objects;
import spice.authority.host.engine.Run;

/**
 * What {@link HostStore#recover} decided for one run of the store, and why; also kept in the
 * store's {@code recovery_decisions} table.
 *
 * @param run the resumed run (RUNNING in the engine), for {@link Outcome#RESUMED} only
 * @param cutOff the tool call a crash cut off, for {@link Reason#CUT_OFF_TOOL_CALL} only
 * @param lastCheckpoint the sequence of the run's last checkpoint, or {@code null} when it has none
 * @param operatorCommand what the operator runs to end the run at the helper, or {@code null}
 */
public record RecoveryDecision(String runId, Outcome outcome, Reason reason, String detail, CutOffCall cutOff,
                               Long lastCheckpoint, String operatorCommand, Run run) {
    public RecoveryDecision {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
    }

    /** What came of the run. */
    public enum Outcome {
        /** Imported through the helper and RUNNING in the engine at {@code last_sequence + 1}. */
        RESUMED,
        /** Not resumed, and never will be automatically: reported with its reason and the operator's command. */
        REPORTED,
        /** A restore hazard: the store's record of the run is not trusted, so nothing was done. */
        REFUSED,
        /** Already over at the helper (ended, abandoned, never started): nothing left to do. */
        RESOLVED,
        /** Not now: try again later (the old owner still lives, the helper cannot be reached). */
        RETRY_LATER
    }

    /** Why; each a stable code (its {@link #code()}). */
    public enum Reason {
        /** A SUSPENDED run with a signed checkpoint, imported. */
        SUSPENDED_CHECKPOINT,
        /** A checkpoint whose envelope a crash lost, re-issued by the helper for the identical payload, imported. */
        REISSUED_CHECKPOINT,
        /** ACTIVE at the crash inside a tool call that has no terminal event: never run again. */
        CUT_OFF_TOOL_CALL,
        /** ACTIVE at the crash with no open tool call. */
        ACTIVE_AT_CRASH,
        /** A checkpoint whose sign never reached the helper: the run is ACTIVE there. */
        SIGN_NEVER_TOOK_EFFECT,
        /** The helper's checkpoint moved on (a local resume the store did not record): the envelope is stale. */
        STALE_CHECKPOINT,
        /** The run's end (a terminal snapshot) is at the helper; only its envelope was lost. */
        ENDED_AT_HELPER,
        /** The operator abandoned the run at the helper. */
        ABANDONED_AT_HELPER,
        /** The helper never heard of the run: its start was cut off before it. */
        NEVER_STARTED,
        /** The helper refused the import: the run's last owner still lives (busy). */
        OWNER_ALIVE,
        /** The helper could not be asked. */
        HELPER_UNREACHABLE,
        /** The helper or the engine refused the import for another reason (see the detail). */
        IMPORT_REFUSED,
        /** The import failed after its consume point: the engine stopped it, never retried. */
        IMPORT_UNCERTAIN,
        /** Restore hazard: a checkpoint whose digest disagrees with its payload. */
        CHECKPOINT_DIGEST,
        /** Restore hazard: a checkpoint whose run ID, sequence, status or envelope disagrees with its run. */
        CHECKPOINT_MISMATCH,
        /** Restore hazard: a checkpoint payload that no longer validates. */
        PAYLOAD_INVALID,
        /** Restore hazard: a plan or compatibility identity that differs from this engine's or the run's. */
        PLAN_MISMATCH,
        /**
         * The run's checkpoint is of another snapshot format than this engine's: recover it with an
         * engine of its format (nothing was asked of the helper).
         */
        FORMAT_MISMATCH,
        /** Restore hazard: a gap or a bad digest in the run's event chain. */
        EVENT_CHAIN,
        /** Restore hazard: a tool operation that disagrees with its events, or open at the checkpoint. */
        OPERATION_MISMATCH,
        /** Restore hazard: more events than {@link HostStore#MAX_EVENTS_PER_RUN}. */
        TOO_MANY_EVENTS,
        /** Restore hazard: a SUSPENDED run with no checkpoint at its last event. */
        MISSING_CHECKPOINT,
        /** The store failed while recovering the run. */
        STORAGE_FAILURE;

        /** The code, as kept in the store and printed: lower case, underscores. */
        public String code() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A tool call with a ToolCallStarted and no terminal event.
     *
     * @param mutating whether the tool's declared effect mutates
     * @param startedSequence the sequence of its ToolCallStarted
     */
    public record CutOffCall(String callId, String tool, boolean mutating, String replaySafety, long startedSequence) {
    }

    @Override
    public String toString() {
        return "RecoveryDecision[" + runId + ", " + outcome + ", " + reason.code() + "]";
    }
}
