package spice.authority.host;

import java.util.Objects;

/** A typed answer together with the helper's JSON document it was read from. */
public record WithJson<T>(T value, RawJson json) {
    public WithJson {
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(json, "json");
    }
}
