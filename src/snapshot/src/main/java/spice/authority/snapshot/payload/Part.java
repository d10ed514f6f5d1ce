package spice.authority.snapshot.payload;

import java.util.Objects;

/**
 * One part of a message (wire-format.md b.1). The four kinds are a sealed set; each carries only
 * the members its kind uses, so an "inactive" member cannot be represented.
 */
public sealed interface Part {
    /** The wire kind: {@code text}, {@code tool_call}, {@code tool_result} or {@code extension}. */
    String kind();

    /** A text part. */
    record Text(String text) implements Part {
        public Text {
            Objects.requireNonNull(text, "text");
        }

        @Override
        public String kind() {
            return "text";
        }

        @Override
        public String toString() {
            return "Text[" + text.length() + " chars]";
        }
    }

    /** A tool call issued by the assistant; {@code data} holds the arguments. */
    record ToolCall(String name, String callId, JsonValue data) implements Part {
        public ToolCall {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(callId, "callId");
            Objects.requireNonNull(data, "data");
        }

        @Override
        public String kind() {
            return "tool_call";
        }
    }

    /** A tool result; {@code data} holds the result content. */
    record ToolResult(String name, String callId, JsonValue data) implements Part {
        public ToolResult {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(callId, "callId");
            Objects.requireNonNull(data, "data");
        }

        @Override
        public String kind() {
            return "tool_result";
        }
    }

    /** A namespaced extension value. */
    record Extension(String namespace, JsonValue data) implements Part {
        public Extension {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(data, "data");
        }

        @Override
        public String kind() {
            return "extension";
        }
    }
}
