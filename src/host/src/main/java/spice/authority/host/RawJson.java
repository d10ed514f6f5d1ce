package spice.authority.host;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A JSON document exactly as the helper sent it, for tools that show the answer as it is.
 *
 * <p>Guarantees: immutable (copied in and out); {@link #toString()} gives only the size. The
 * helper's answers carry no secrets, except {@code POST /v1/sessions}, whose document this client
 * never exposes.
 */
public final class RawJson {
    private final byte[] bytes;

    RawJson(byte[] bytes) {
        this.bytes = bytes.clone();
    }

    /** A copy of the bytes. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The document as UTF-8 text. */
    public String text() {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * The document as an object: members in order, values {@code String}, {@code Long} (unsigned
     * integers only), {@code Boolean}, {@code null}, lists and nested maps; repeated members refused.
     *
     * @throws java.io.IOException when it is not such an object
     */
    public java.util.Map<String, Object> object() throws java.io.IOException {
        try {
            return Json.object(bytes);
        } catch (Json.Malformed e) {
            throw new java.io.IOException("not a JSON object of strings, unsigned integers, booleans and nulls");
        }
    }

    /** A document from text (e.g. one line of JSON-lines output). */
    public static RawJson of(String text) {
        return new RawJson(text.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RawJson r && Arrays.equals(bytes, r.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "RawJson[" + bytes.length + " bytes]";
    }
}
