package spice.authority.snapshot.crypto;

import spice.authority.snapshot.json.GoText;

/** LP(x) concatenation: each component as u64be(length) followed by its bytes (wire-format.md 0). */
public final class LengthPrefixed {
    private byte[] buf;
    private int len;

    public LengthPrefixed(int capacity) {
        buf = new byte[capacity];
    }

    private void ensure(int extra) {
        if (len + extra > buf.length) {
            buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + extra));
        }
    }

    public LengthPrefixed add(byte[] component) {
        ensure(8 + component.length);
        putLong(component.length);
        System.arraycopy(component, 0, buf, len, component.length);
        len += component.length;
        return this;
    }

    /**
     * LP(UTF-8 of {@code text}).
     *
     * @throws IllegalArgumentException when {@code text} is not valid Unicode text (an unpaired
     *     surrogate): a replacing encoder would make two different strings hash alike
     */
    public LengthPrefixed add(String text) {
        return add(GoText.utf8Exact(text));
    }

    /** LP(u64be(v)). */
    public LengthPrefixed addU64(long v) {
        ensure(16);
        putLong(8);
        putLong(v);
        return this;
    }

    /** LP(u32be(v)). */
    public LengthPrefixed addU32(int v) {
        ensure(12);
        putLong(4);
        buf[len++] = (byte) (v >>> 24);
        buf[len++] = (byte) (v >>> 16);
        buf[len++] = (byte) (v >>> 8);
        buf[len++] = (byte) v;
        return this;
    }

    private void putLong(long v) {
        for (int s = 56; s >= 0; s -= 8) {
            buf[len++] = (byte) (v >>> s);
        }
    }

    public byte[] toByteArray() {
        return java.util.Arrays.copyOf(buf, len);
    }
}
