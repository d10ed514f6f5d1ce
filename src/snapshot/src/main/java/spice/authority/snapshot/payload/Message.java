package spice.authority.snapshot.payload;

import java.util.List;
import java.util.Objects;

/** One history message (wire-format.md b.1). */
public record Message(String id, Role role, List<Part> parts) {
    public Message {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(role, "role");
        parts = List.copyOf(parts);
    }
}
