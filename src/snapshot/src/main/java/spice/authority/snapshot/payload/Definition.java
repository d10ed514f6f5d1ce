package spice.authority.snapshot.payload;

import java.util.Objects;

/** The kernel definition identity carried by a payload: name, model and turn limit. */
public record Definition(String name, String model, int maxTurns) {
    public Definition {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(model, "model");
    }
}
