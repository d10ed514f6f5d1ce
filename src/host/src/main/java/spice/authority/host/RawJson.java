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
