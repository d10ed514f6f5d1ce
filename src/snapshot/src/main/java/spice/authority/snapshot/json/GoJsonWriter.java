package spice.authority.snapshot.json;

import java.util.Arrays;

/**
 * Writes JSON byte-for-byte as Go's {@code json.Marshal} does (HTML escaping on), per
 * wire-format.md b.2: {@code \b} and {@code \f} short escapes, lowercase {@code \\u00XX} for other
 * control bytes, {@code <}, {@code >}, {@code &}, U+2028 and U+2029 escaped, everything else raw
 * UTF-8, {@code /} never escaped. Raw values ({@code data}) are compacted with the same escaping.
 *
 * <p>Not thread-safe; one writer per encoding.
 */
public final class GoJsonWriter {
    private static final byte[] ESCAPE = new byte[128];

    static {
        // 0 = copy raw; otherwise the char after the backslash, or 'u' for \\u00XX.
        for (int c = 0; c < 0x20; c++) {
            ESCAPE[c] = 'u';
        }
        ESCAPE['\b'] = 'b';
        ESCAPE['\f'] = 'f';
        ESCAPE['\n'] = 'n';
        ESCAPE['\r'] = 'r';
        ESCAPE['\t'] = 't';
        ESCAPE['"'] = '"';
        ESCAPE['\\'] = '\\';
        ESCAPE['<'] = 'u';
        ESCAPE['>'] = 'u';
        ESCAPE['&'] = 'u';
    }

    private byte[] buf;
    private int len;
    /** Compare mode: the bytes the output must equal; null when writing. */
    private final byte[] expect;
    /** Compare mode: how many bytes of {@link #expect} were compared and dropped already. */
    private int base;

    public GoJsonWriter(int initialCapacity) {
        this.expect = null;
        buf = new byte[Math.max(16, initialCapacity)];
    }

    private GoJsonWriter(byte[] expect) {
        this.expect = expect;
        buf = new byte[(int) Math.min(COMPARE_CHUNK, Math.max(16, expect.length))];
    }

    private static final int COMPARE_CHUNK = 8192;

    /**
     * A writer that keeps no output: it compares what is written with {@code expected} a chunk at
     * a time and throws {@link Mismatch} at the first chunk that differs (or runs past it).
     * {@link #contentEquals} then tells whether the whole output was {@code expected}. Comparing
     * an encoding with its input this way holds no copy of it: escapes the canonical form adds
     * cannot grow a buffer several times the input's size. Read-back methods are refused.
     */
    public static GoJsonWriter comparingWith(byte[] expected) {
        return new GoJsonWriter(expected);
    }

    /** The output differs from what a {@link #comparingWith} writer expects; stackless. */
    public static final class Mismatch extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private static final Mismatch INSTANCE = new Mismatch();

        private Mismatch() {
            super("JSON output differs from the expected bytes", null, false, false);
        }
    }

    public int size() {
        return base + len;
    }

    public byte[] toByteArray() {
        if (expect != null) {
            throw new IllegalStateException("a comparing writer keeps no output");
        }
        return Arrays.copyOf(buf, len);
    }

    /** True when the written bytes equal {@code other[0..other.length)} exactly. */
    public boolean contentEquals(byte[] other) {
        if (expect != null) {
            return other == expect && (long) base + len == other.length && Arrays.equals(buf, 0, len, other, base, base + len);
        }
        return len == other.length && Arrays.equals(buf, 0, len, other, 0, len);
    }

    private void ensure(int extra) {
        if (len + extra > buf.length) {
            if (expect != null) {
                compareAndDrop(extra);
                return;
            }
            long want = Math.max((long) buf.length * 2, (long) len + extra);
            if (want > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("JSON output too large");
            }
            buf = Arrays.copyOf(buf, (int) want);
        }
    }

    /** Compare mode: checks the buffered bytes against {@link #expect}, drops them, makes room for {@code extra}. */
    private void compareAndDrop(int extra) {
        if ((long) base + len > expect.length || !Arrays.equals(buf, 0, len, expect, base, base + len)) {
            throw Mismatch.INSTANCE;
        }
        base += len;
        len = 0;
        if (extra > buf.length) {
            // One write larger than a chunk (a long string): room for it, never past the expected end.
            if ((long) base + extra > expect.length) {
                throw Mismatch.INSTANCE;
            }
            buf = new byte[extra];
        }
    }

    public GoJsonWriter raw(char c) {
        ensure(1);
        buf[len++] = (byte) c;
        return this;
    }

    /** Appends ASCII text verbatim (member names, punctuation). */
    public GoJsonWriter ascii(String s) {
        int n = s.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) s.charAt(i);
        }
        return this;
    }

    /** Appends an unsigned 64-bit integer in plain decimal. */
    public GoJsonWriter unsigned(long v) {
        return ascii(Long.toUnsignedString(v));
    }

    /** Appends a quoted, escaped JSON string. */
    public GoJsonWriter string(String s) {
        int n = s.length();
        ensure(n + 2);
        buf[len++] = '"';
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                byte e = ESCAPE[c];
                if (e == 0) {
                    if (len == buf.length) {
                        ensure(1);
                    }
                    buf[len++] = (byte) c;
                } else if (e == 'u') {
                    escapeU(c);
                } else {
                    ensure(2);
                    buf[len++] = '\\';
                    buf[len++] = e;
                }
            } else if (c < 0x800) {
                ensure(2);
                buf[len++] = (byte) (0xC0 | (c >> 6));
                buf[len++] = (byte) (0x80 | (c & 0x3F));
            } else if (c == 0x2028 || c == 0x2029) {
                escapeU(c);
            } else if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    ensure(4);
                    buf[len++] = (byte) (0xF0 | (cp >> 18));
                    buf[len++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    buf[len++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    buf[len++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    // An unpaired surrogate is not valid Unicode text; Go writes \\ufffd for
                    // invalid UTF-8, which is what such a string would be.
                    escapeU(0xFFFD);
                }
            } else {
                ensure(3);
                buf[len++] = (byte) (0xE0 | (c >> 12));
                buf[len++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                buf[len++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        ensure(1);
        buf[len++] = '"';
        return this;
    }

    private void escapeU(int c) {
        ensure(6);
        buf[len++] = '\\';
        buf[len++] = 'u';
        buf[len++] = (byte) GoText.HEX[(c >> 12) & 0xF];
        buf[len++] = (byte) GoText.HEX[(c >> 8) & 0xF];
        buf[len++] = (byte) GoText.HEX[(c >> 4) & 0xF];
        buf[len++] = (byte) GoText.HEX[c & 0xF];
    }

    /**
     * Appends a raw JSON value compacted as Go's {@code compact(dst, src, escape=true)} does:
     * white space outside strings removed; {@code <}, {@code >}, {@code &}, U+2028 and U+2029
     * escaped; nothing else changed (numbers, escapes, member order and invalid UTF-8 bytes stay).
     * The value must be syntactically valid JSON.
     */
    public GoJsonWriter compactRaw(byte[] src) {
        ensure(src.length);
        boolean inString = false;
        boolean escaped = false;
        for (int i = 0; i < src.length; i++) {
            int c = src[i] & 0xFF;
            if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    inString = false;
                }
            } else {
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                    continue;
                }
                if (c == '"') {
                    inString = true;
                }
            }
            if (c == '<' || c == '>' || c == '&') {
                escapeU(c);
            } else if (c == 0xE2 && i + 2 < src.length && (src[i + 1] & 0xFF) == 0x80
                    && ((src[i + 2] & 0xFF) & ~1) == 0xA8) {
                escapeU(0x2020 | ((src[i + 2] & 0xFF) == 0xA8 ? 8 : 9));
                i += 2;
            } else {
                if (len == buf.length) {
                    ensure(1);
                }
                buf[len++] = (byte) c;
            }
        }
        return this;
    }
}
