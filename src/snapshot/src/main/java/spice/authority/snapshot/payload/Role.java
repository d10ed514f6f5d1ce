package spice.authority.snapshot.payload;

/** Message roles (wire-format.md b.1); matching is case-sensitive. */
public enum Role {
    SYSTEM("system"),
    USER("user"),
    ASSISTANT("assistant"),
    TOOL("tool");

    private final String wire;

    Role(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }

    /** Exact lookup; null for any other text. */
    public static Role fromWire(String s) {
        return switch (s) {
            case "system" -> SYSTEM;
            case "user" -> USER;
            case "assistant" -> ASSISTANT;
            case "tool" -> TOOL;
            default -> null;
        };
    }
}
