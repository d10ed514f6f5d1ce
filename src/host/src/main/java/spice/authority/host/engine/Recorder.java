package spice.authority.host.engine;

import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.payload.PlanIdentity;
import spice.authority.snapshot.plan.ToolDefinition;

/**
 * A required, durable observer of an engine's runs: the host's run store. Unlike an
 * {@link EventListener}, the engine waits for it and depends on it:
 * <ul>
 *   <li>an event counts only once {@link #event} returned: a tool runs only after its
 *       ToolCallStarted is recorded, and its result counts only after its ToolCallCompleted is;
 *   <li>a checkpoint's payload is recorded ({@link #pending}) before the helper is asked to sign
 *       it, and the envelope ({@link #signed}) once it answered, so no envelope is ever lost;
 *   <li>the first failure stops the run before anything else of it executes: the engine hands
 *       back the run's lease (the run is then abandonable at the helper) and throws
 *       {@link RecordFailedException}. A recorder that failed once refuses everything after.
 * </ul>
 * Calls for one run come from the thread that holds its turn lock, in sequence order.
 */
public interface Recorder {
    /** What a recorder learns of a run when it begins in this engine. */
    record RunFacts(String runId, PlanIdentity plan, List<ToolDefinition> tools, long firstSequence,
                    byte[] importedEnvelope) {
        public RunFacts {
            Objects.requireNonNull(runId, "runId");
            Objects.requireNonNull(plan, "plan");
            tools = List.copyOf(tools);
        }

        public boolean imported() {
            return importedEnvelope != null;
        }

        @Override
        public String toString() {
            return "RunFacts[" + runId + ", first=" + Long.toUnsignedString(firstSequence) + (imported() ? ", imported" : "") + "]";
        }
    }

    /**
     * A run begins, before the helper hears of it: started (first sequence 1, no envelope), or
     * imported (first sequence {@code last_sequence + 1}; the envelope prepared, before consume).
     */
    void begin(RunFacts run) throws RecordingException;

    /** One event, exactly the run's next sequence; durable when this returns. */
    void event(Event event) throws RecordingException;

    /**
     * A checkpoint's canonical payload at {@code sequence} (its {@code last_sequence}) and its
     * status, durable before the helper is asked to sign it.
     */
    void pending(String runId, long sequence, spice.authority.snapshot.payload.LifecycleStatus status, byte[] payload)
            throws RecordingException;

    /**
     * The helper's envelope of the pending checkpoint at {@code sequence}; {@code completing} is
     * the event that the signature completes (RunSuspended at {@code sequence}) when the recorder
     * has not seen it yet, else {@code null}. One commit.
     */
    void signed(String runId, long sequence, byte[] envelope, Event completing) throws RecordingException;

    /** A recorder that keeps nothing (an engine without a store). */
    Recorder NONE = new Recorder() {
        @Override
        public void begin(RunFacts run) {
        }

        @Override
        public void event(Event event) {
        }

        @Override
        public void pending(String runId, long sequence, spice.authority.snapshot.payload.LifecycleStatus status,
                            byte[] payload) {
        }

        @Override
        public void signed(String runId, long sequence, byte[] envelope, Event completing) {
        }

        @Override
        public String toString() {
            return "Recorder.NONE";
        }
    };

    /** A recorder could not make a record durable; its message names what and why, never data. */
    class RecordingException extends Exception {
        private static final long serialVersionUID = 1L;

        public RecordingException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
