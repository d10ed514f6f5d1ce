package spice.authority.snapshot.payload;

import java.util.Arrays;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoJsonWriter;
import spice.authority.snapshot.json.JsonSyntaxException;

/**
 * One raw JSON value (a part's {@code data}), kept as its exact bytes. Valid from birth: the bytes
 * are exactly one syntactically valid JSON value without surrounding white space. On output it is
 * compacted as Go does (wire-format.md b.2).
 */
public final class JsonValue {
    private final byte[] raw;

    private JsonValue(byte[] raw) {
        this.raw = raw;
    }

    /** Trusted path from the decoder: the bytes were produced by a syntax-checking skip. */
    static JsonValue ofChecked(byte[] raw) {
        return new JsonValue(raw);
    }

    /**
     * Wraps a copy of {@code bytes}, which must be exactly one JSON value.
     *
     * @throws IllegalArgumentException when the bytes are not one JSON value
     */
    public static JsonValue of(byte[] bytes) {
        byte[] copy = bytes.clone();
        if (!isOneValue(copy)) {
            throw new IllegalArgumentException("not exactly one JSON value without surrounding white space");
        }
        return new JsonValue(copy);
    }

    /**
     * Convenience for {@link #of(byte[])} on text, encoded as UTF-8.
     *
     * @throws IllegalArgumentException also for text with an unpaired surrogate, which has no
     *     UTF-8 form (never replaced: the signed value would not be the one given)
     */
    public static JsonValue of(String json) {
        return of(spice.authority.snapshot.json.GoText.utf8Exact(json));
    }

    static boolean isOneValue(byte[] b) {
        if (b.length == 0) {
            return false;
        }
        try {
            GoJsonReader r = new GoJsonReader(b);
            if (r.skipValue() != 0) {
                return false; // leading white space
            }
            return r.atEnd();
        } catch (JsonSyntaxException e) {
            return false;
        }
    }

    /** The raw bytes as received (a copy). */
    public byte[] rawBytes() {
        return raw.clone();
    }

    /** Number of raw bytes (the size the payload limits count). */
    public int rawLength() {
        return raw.length;
    }

    byte[] rawUnsafe() {
        return raw;
    }

    /** The compacted, HTML-escaped form Go's encoder emits. */
    public byte[] compactBytes() {
        return new GoJsonWriter(raw.length).compactRaw(raw).toByteArray();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JsonValue v && Arrays.equals(raw, v.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    /** Size only: data is application content and is never printed. */
    @Override
    public String toString() {
        return "JsonValue[" + raw.length + " bytes]";
    }
}
