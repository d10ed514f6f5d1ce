package spice.authority.host.engine;

import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.payload.Message;

/**
 * The model that drives a run's turns. Called one or more times per turn: each reply is either a
 * tool round (the engine runs the calls and asks again) or the turn's final answer.
 */
@FunctionalInterface
public interface Model {
    Reply respond(Request request) throws Exception;

    /**
     * What the model sees.
     *
     * @param operationId {@code <run_id>/model/<turn>}: run-scoped, so a resumed run in a fresh
     *     process never reuses an earlier one (turns continue after {@code completed_turns}); the
     *     same for every call within one turn (as in the reference), so it is not a per-request
     *     idempotency key
     * @param turn the turn, from 1
     * @param history the run's provider-neutral history so far
     */
    record Request(String operationId, String runId, int turn, List<Message> history) {
        public Request {
            history = List.copyOf(history);
        }
    }

    /** A model reply. */
    sealed interface Reply {
        /** The turn's final answer (not added to the history, as in the reference). */
        record Final(String text) implements Reply {
            public Final {
                Objects.requireNonNull(text, "text");
            }
        }

        /** Text plus tool calls; the engine appends it as an assistant message and runs the calls. */
        record ToolRound(String text, List<ToolCall> calls) implements Reply {
            public ToolRound {
                calls = List.copyOf(calls);
                if (calls.isEmpty()) {
                    throw new IllegalArgumentException("a tool round needs at least one call");
                }
            }
        }
    }

    /** One requested call: a model-supplied call ID, the tool's name, its arguments. */
    record ToolCall(String callId, String toolName, JsonValue arguments) {
        public ToolCall {
            Objects.requireNonNull(callId, "callId");
            Objects.requireNonNull(toolName, "toolName");
            Objects.requireNonNull(arguments, "arguments");
        }
    }
}
