package spice.authority.snapshot.plan;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.JsonSyntaxException;

/**
 * A leased tool definition as the plan identity sees it (wire-format.md b.4).
 *
 * <p><b>Guarantees.</b> Valid from birth: name a token(128), description a token(4096), input
 * schema one JSON value of 1..1 MiB kept exactly as supplied, read-only tools replay-safe and
 * without write/execute/network/environment-write capabilities, mutating tools not "safe",
 * capabilities unique.
 */
public record ToolDefinition(String name, String description, byte[] inputSchema, Effect effect,
                             ReplaySafety replaySafety, List<Capability> capabilities) {

    public enum Effect {
        READ_ONLY("read_only"), MUTATING("mutating");

        final String wire;

        Effect(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    public enum ReplaySafety {
        SAFE("safe"), IDEMPOTENT("idempotent"), UNSAFE("unsafe");

        final String wire;

        ReplaySafety(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    public enum Capability {
        FILESYSTEM_READ("filesystem.read"),
        FILESYSTEM_WRITE("filesystem.write"),
        PROCESS_EXECUTE("process.execute"),
        NETWORK_ACCESS("network.access"),
        SECRETS_READ("secrets.read"),
        ENVIRONMENT_READ("environment.read"),
        ENVIRONMENT_WRITE("environment.write");

        final String wire;

        Capability(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        public static Capability fromWire(String s) {
            for (Capability c : values()) {
                if (c.wire.equals(s)) {
                    return c;
                }
            }
            throw new IllegalArgumentException("unknown capability");
        }
    }

    private static final EnumSet<Capability> NOT_FOR_READ_ONLY = EnumSet.of(
            Capability.FILESYSTEM_WRITE, Capability.PROCESS_EXECUTE, Capability.NETWORK_ACCESS,
            Capability.ENVIRONMENT_WRITE);

    public ToolDefinition {
        Objects.requireNonNull(effect, "effect");
        Objects.requireNonNull(replaySafety, "replaySafety");
        if (name == null || !GoText.isToken(name, 128)) {
            throw new IllegalArgumentException("tool name must be a token of at most 128 bytes");
        }
        if (description == null || !GoText.isToken(description, 4096)) {
            throw new IllegalArgumentException("tool description must be a token of at most 4096 bytes");
        }
        inputSchema = inputSchema.clone();
        if (inputSchema.length == 0 || inputSchema.length > (1 << 20) || !isJson(inputSchema)) {
            throw new IllegalArgumentException("input schema must be valid JSON of 1..1 MiB");
        }
        if (effect == Effect.READ_ONLY && replaySafety != ReplaySafety.SAFE) {
            throw new IllegalArgumentException("a read-only tool must be replay-safe");
        }
        if (effect == Effect.MUTATING && replaySafety == ReplaySafety.SAFE) {
            throw new IllegalArgumentException("a mutating tool cannot be replay-safe");
        }
        capabilities = List.copyOf(capabilities);
        EnumSet<Capability> seen = EnumSet.noneOf(Capability.class);
        for (Capability c : capabilities) {
            if (!seen.add(c)) {
                throw new IllegalArgumentException("capabilities may not repeat");
            }
            if (effect == Effect.READ_ONLY && NOT_FOR_READ_ONLY.contains(c)) {
                throw new IllegalArgumentException("a read-only tool may not declare " + c.wire);
            }
        }
    }

    private static boolean isJson(byte[] b) {
        try {
            GoJsonReader r = new GoJsonReader(b);
            r.skipValue();
            r.skipWhitespace();
            return r.atEnd();
        } catch (JsonSyntaxException e) {
            return false;
        }
    }

    @Override
    public byte[] inputSchema() {
        return inputSchema.clone();
    }

    /** Capability wire names sorted by bytes (the fingerprint order). */
    List<String> sortedCapabilityNames() {
        List<String> names = new ArrayList<>();
        for (Capability c : capabilities) {
            names.add(c.wire);
        }
        names.sort(GoText::compareUtf8);
        return names;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ToolDefinition t && name.equals(t.name) && description.equals(t.description)
                && java.util.Arrays.equals(inputSchema, t.inputSchema) && effect == t.effect
                && replaySafety == t.replaySafety && capabilities.equals(t.capabilities);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, description, java.util.Arrays.hashCode(inputSchema), effect, replaySafety, capabilities);
    }

    @Override
    public String toString() {
        return "ToolDefinition[name=" + name + ", effect=" + effect.wire + ", replay_safety=" + replaySafety.wire
                + ", capabilities=" + capabilities.size() + "]";
    }
}
