package spice.authority.host.engine;

import java.util.Objects;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.plan.ToolDefinition;

/** A tool of a leased plan: its exact contract ({@link #definition()}) and its implementation. */
public interface Tool {
    ToolDefinition definition();

    /**
     * Runs one call. A mutating tool's call is never repeated by the engine: if the host dies while
     * it runs, the run stays ACTIVE at the helper and only the operator may end it.
     */
    JsonValue call(String runId, String callId, JsonValue arguments) throws Exception;

    /** The body of a tool: one call. */
    @FunctionalInterface
    interface Body {
        JsonValue call(String runId, String callId, JsonValue arguments) throws Exception;
    }

    /**
     * A tool of {@code definition} whose calls run {@code body}.
     *
     * @throws IllegalArgumentException a name that is not valid UTF-8 or holds NUL, CR, LF or TAB,
     *     or an input schema that is not valid UTF-8 (the tool layer's text rules)
     */
    static Tool of(ToolDefinition definition, Body body) {
        Objects.requireNonNull(definition, "definition");
        Objects.requireNonNull(body, "body");
        ToolText.requireDefinition(definition);
        return new Tool() {
            @Override
            public ToolDefinition definition() {
                return definition;
            }

            @Override
            public JsonValue call(String runId, String callId, JsonValue arguments) throws Exception {
                return body.call(runId, callId, arguments);
            }

            @Override
            public String toString() {
                return "Tool[" + definition + "]";
            }
        };
    }
}
