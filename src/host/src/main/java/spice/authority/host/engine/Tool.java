package spice.authority.host.engine;

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
}
