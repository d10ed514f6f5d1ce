package spice.authority.host.engine;

import java.util.Objects;

/**
 * One committed event of a run's append-only log.
 *
 * @param sequence the run's event sequence (1 for RunStarted; after an import it continues at the
 *     snapshot's {@code last_sequence + 1})
 * @param turn the turn the event belongs to (0 when none)
 * @param callId the tool call, for tool events; {@code null} otherwise
 * @param messageId the appended message, for {@link Type#MESSAGE_APPENDED}; {@code null} otherwise
 * @param toolName the tool's name, for tool events; {@code null} otherwise
 *
 * <p>Guarantees: carries identifiers only, never message text or tool data.
 */
public record Event(long sequence, String runId, Type type, int turn, String callId, String messageId,
                    String toolName) {
    /** The event types of the reference engine. */
    public enum Type {
        RUN_STARTED("RunStarted"),
        TURN_STARTED("TurnStarted"),
        MESSAGE_APPENDED("MessageAppended"),
        TOOL_CALL_STARTED("ToolCallStarted"),
        TOOL_CALL_COMPLETED("ToolCallCompleted"),
        TURN_COMPLETED("TurnCompleted"),
        RUN_SUSPENDED("RunSuspended"),
        RUN_RESUMED("RunResumed"),
        RUN_COMPLETED("RunCompleted"),
        RUN_FAILED("RunFailed"),
        RUN_CANCELLED("RunCancelled");

        private final String display;

        Type(String display) {
            this.display = display;
        }

        /** The event's name as printed, e.g. {@code RunStarted}. */
        public String display() {
            return display;
        }
    }

    public Event {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(type, "type");
    }
}
