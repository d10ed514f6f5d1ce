package spice.authority.snapshot.json;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A pull reader over one UTF-8 JSON document with the syntax and string-decoding semantics of Go's
 * classic {@code encoding/json} (wire-format.md b.3):
 *
 * <ul>
 *   <li>RFC 8259 grammar; white space is only space, tab, LF and CR (a byte-order mark is an
 *       error); bytes below 0x20 are not allowed inside strings.
 *   <li>Nesting deeper than 10,000 levels is a syntax error, as in Go's scanner.
 *   <li>Strings: escapes decoded; every invalid raw UTF-8 byte becomes U+FFFD; an escaped
 *       surrogate that is not part of a valid pair becomes U+FFFD.
 *   <li>Raw bytes inside strings are not checked for UTF-8 validity by the syntax check.
 *   <li>Whether the last string read needed such a substitution is kept
 *       ({@link #lastStringSubstituted()}), so a caller can refuse a value that was not valid text.
 * </ul>
 *
 * <p>All skipping is iterative, so hostile nesting cannot overflow the stack. Errors are thrown as
 * stackless {@link JsonSyntaxException}s. Not thread-safe.
 */
public final class GoJsonReader {
    /** Go's {@code maxNestingDepth}. */
    public static final int MAX_DEPTH = 10_000;

    private final byte[] in;
    private final int end;
    private int pos;
    private int depth;

    public GoJsonReader(byte[] in) {
        this(in, 0, in.length);
    }

    public GoJsonReader(byte[] in, int from, int to) {
        this.in = in;
        this.pos = from;
        this.end = to;
    }

    public int position() {
        return pos;
    }

    public int depth() {
        return depth;
    }

    public byte[] input() {
        return in;
    }

    private JsonSyntaxException error(String what) {
        return new JsonSyntaxException(what, pos);
    }

    /** Skips JSON white space (space, tab, LF, CR). */
    public void skipWhitespace() {
        while (pos < end) {
            byte b = in[pos];
            if (b == ' ' || b == '\n' || b == '\r' || b == '\t') {
                pos++;
            } else {
                return;
            }
        }
    }

    public boolean atEnd() {
        return pos >= end;
    }

    /** The next significant byte (after white space), or -1 at the end of input. */
    public int peek() {
        skipWhitespace();
        return pos < end ? in[pos] & 0xFF : -1;
    }

    /** The kind of the next value: '{', '[', '"', 'n' (null), 't'/'f' (bool), '0' (number). */
    public int peekKind() {
        int c = peek();
        if (c < 0) {
            throw error("unexpected end of JSON input");
        }
        return switch (c) {
            case '{', '[', '"', 'n', 't', 'f' -> c;
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield '0';
                }
                throw error("invalid character looking for beginning of value");
            }
        };
    }

    private void push() {
        if (++depth > MAX_DEPTH) {
            throw error("exceeded max depth");
        }
    }

    // ---- objects -------------------------------------------------------------------------

    /** Consumes '{' (the caller has checked {@link #peekKind()}). */
    public void beginObject() {
        pos++;
        push();
    }

    /**
     * Advances to the next member of the current object: returns its decoded name with the colon
     * consumed, or {@code null} after consuming the closing brace.
     *
     * @param first true for the first call after {@link #beginObject()}
     */
    public String nextMember(boolean first) {
        int c = peek();
        if (!first) {
            if (c == ',') {
                pos++;
                c = peek();
                if (c != '"') {
                    throw error("invalid character looking for beginning of object key string");
                }
            } else if (c == '}') {
                pos++;
                depth--;
                return null;
            } else {
                throw c < 0 ? error("unexpected end of JSON input") : error("invalid character after object key:value pair");
            }
        } else if (c == '}') {
            pos++;
            depth--;
            return null;
        } else if (c != '"') {
            throw c < 0 ? error("unexpected end of JSON input") : error("invalid character looking for beginning of object key string");
        }
        String name = readString();
        if (peek() != ':') {
            throw error("invalid character after object key");
        }
        pos++;
        return name;
    }

    // ---- arrays --------------------------------------------------------------------------

    /** Consumes '[' (the caller has checked {@link #peekKind()}). */
    public void beginArray() {
        pos++;
        push();
    }

    /**
     * Advances to the next element of the current array: true when an element follows, false
     * after consuming the closing bracket.
     */
    public boolean nextElement(boolean first) {
        int c = peek();
        if (c == ']' && first) {
            pos++;
            depth--;
            return false;
        }
        if (first) {
            if (c < 0) {
                throw error("unexpected end of JSON input");
            }
            return true;
        }
        if (c == ',') {
            pos++;
            peekKind(); // a value must follow
            return true;
        }
        if (c == ']') {
            pos++;
            depth--;
            return false;
        }
        throw c < 0 ? error("unexpected end of JSON input") : error("invalid character after array element");
    }

    // ---- scalars -------------------------------------------------------------------------

    /** Consumes the literal {@code null}. */
    public void readNull() {
        literal("null");
    }

    /** Consumes {@code true} or {@code false}. */
    public boolean readBoolean() {
        if (in[pos] == 't') {
            literal("true");
            return true;
        }
        literal("false");
        return false;
    }

    private void literal(String word) {
        for (int i = 0; i < word.length(); i++) {
            if (pos >= end) {
                throw error("unexpected end of JSON input");
            }
            if (in[pos] != word.charAt(i)) {
                throw error("invalid character in literal " + word);
            }
            pos++;
        }
    }

    /**
     * Consumes a number literal (Go grammar) and returns its value when it is a plain unsigned
     * decimal integer that fits in 64 bits; returns {@code null}-equivalent via
     * {@link #NOT_UNSIGNED} otherwise. The literal is always consumed.
     */
    public long readNumberAsUnsigned() {
        int start = pos;
        scanNumber();
        long v = 0;
        for (int i = start; i < pos; i++) {
            int d = in[i] - '0';
            if (d < 0 || d > 9) {
                return NOT_UNSIGNED;
            }
            // overflow check for unsigned 64-bit
            if (Long.compareUnsigned(v, 0x1999_9999_9999_9999L) > 0) {
                return NOT_UNSIGNED;
            }
            long next = v * 10 + d;
            if (Long.compareUnsigned(next, v * 10) < 0) {
                return NOT_UNSIGNED;
            }
            v = next;
        }
        lastUnsignedValid = true;
        return v;
    }

    /** Marker returned by {@link #readNumberAsUnsigned()}; check {@link #lastNumberWasUnsigned()}. */
    public static final long NOT_UNSIGNED = -1L;

    private boolean lastUnsignedValid;

    /**
     * Whether the last {@link #readNumberAsUnsigned()} produced a value (2^64−1 is a valid value
     * that equals {@link #NOT_UNSIGNED}, so this flag disambiguates).
     */
    public boolean lastNumberWasUnsigned() {
        boolean v = lastUnsignedValid;
        lastUnsignedValid = false;
        return v;
    }

    private void scanNumber() {
        lastUnsignedValid = false;
        if (pos < end && in[pos] == '-') {
            pos++;
        }
        if (pos >= end) {
            throw error("unexpected end of JSON input");
        }
        if (in[pos] == '0') {
            pos++;
        } else if (in[pos] >= '1' && in[pos] <= '9') {
            while (pos < end && in[pos] >= '0' && in[pos] <= '9') {
                pos++;
            }
        } else {
            throw error("invalid character in numeric literal");
        }
        if (pos < end && in[pos] == '.') {
            pos++;
            if (pos >= end || in[pos] < '0' || in[pos] > '9') {
                throw pos >= end ? error("unexpected end of JSON input") : error("invalid character after decimal point in numeric literal");
            }
            while (pos < end && in[pos] >= '0' && in[pos] <= '9') {
                pos++;
            }
        }
        if (pos < end && (in[pos] == 'e' || in[pos] == 'E')) {
            pos++;
            if (pos < end && (in[pos] == '+' || in[pos] == '-')) {
                pos++;
            }
            if (pos >= end || in[pos] < '0' || in[pos] > '9') {
                throw pos >= end ? error("unexpected end of JSON input") : error("invalid character in exponent of numeric literal");
            }
            while (pos < end && in[pos] >= '0' && in[pos] <= '9') {
                pos++;
            }
        }
    }

    /**
     * Reads a string value at the current position (which must be '"') and decodes it. Afterwards
     * {@link #lastStringSubstituted()} tells whether decoding put U+FFFD in place of invalid input.
     */
    public String readString() {
        substituted = false;
        int start = pos + 1; // after the opening quote
        boolean simple = scanString();
        int stop = pos - 1; // the closing quote
        if (simple) {
            return stop == start ? "" : new String(in, start, stop - start, StandardCharsets.ISO_8859_1);
        }
        return decodeSlow(start, stop);
    }

    private boolean substituted;

    /**
     * Whether the last {@link #readString()} (member names included) replaced input by U+FFFD: an
     * invalid raw UTF-8 byte or an escaped surrogate that is not part of a valid pair. The decoded
     * string is then not what the input said, as Go decodes it; a U+FFFD written in the input
     * (raw {@code EF BF BD} or {@code \ufffd}) is not a substitution.
     */
    public boolean lastStringSubstituted() {
        return substituted;
    }

    /** Skips a string at the current position, checking syntax only. */
    private void skipString() {
        scanString();
    }

    /**
     * Checks the syntax of the string at the current position (the opening quote) and moves past
     * its closing quote. Returns true when it holds only printable ASCII without escapes.
     */
    private boolean scanString() {
        pos++;
        boolean simple = true;
        while (true) {
            if (pos >= end) {
                throw error("unexpected end of JSON input");
            }
            int b = in[pos] & 0xFF;
            if (b == '"') {
                pos++;
                return simple;
            }
            if (b == '\\') {
                simple = false;
                pos++;
                if (pos >= end) {
                    throw error("unexpected end of JSON input");
                }
                int e = in[pos] & 0xFF;
                switch (e) {
                    case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> pos++;
                    case 'u' -> {
                        pos++;
                        for (int k = 0; k < 4; k++) {
                            if (pos >= end) {
                                throw error("unexpected end of JSON input");
                            }
                            if (hexValue(in[pos]) < 0) {
                                throw error("invalid character in \\u hexadecimal character escape");
                            }
                            pos++;
                        }
                    }
                    default -> throw error("invalid character in string escape code");
                }
                continue;
            }
            if (b < 0x20) {
                throw error("invalid character in string literal");
            }
            if (b >= 0x80) {
                simple = false;
            }
            pos++;
        }
    }

    private static int hexValue(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }

    private int u4(int at) {
        return (hexValue(in[at]) << 12) | (hexValue(in[at + 1]) << 8) | (hexValue(in[at + 2]) << 4) | hexValue(in[at + 3]);
    }

    /**
     * The number of UTF-16 units {@link #decodeSlow} makes of {@code in[start..stop)}, by the same
     * rules. Sizing the builder by the input's bytes instead would hold twice a long non-Latin-1
     * text (a char slot per byte, two bytes each) before any length rule could refuse it.
     */
    private int decodedUnits(int start, int stop) {
        int units = 0;
        int i = start;
        while (i < stop) {
            int b = in[i] & 0xFF;
            if (b == '\\') {
                if ((in[i + 1] & 0xFF) != 'u') {
                    i += 2;
                } else {
                    int r = u4(i + 2);
                    i += 6;
                    if (r >= 0xD800 && r <= 0xDBFF && i + 6 <= stop && in[i] == '\\' && in[i + 1] == 'u') {
                        int r2 = u4(i + 2);
                        if (r2 >= 0xDC00 && r2 <= 0xDFFF) {
                            i += 6;
                            units++; // the pair's second unit
                        }
                    }
                }
                units++;
                continue;
            }
            if (b < 0x80) {
                units++;
                i++;
                continue;
            }
            int n = utf8SequenceLength(in, i, stop);
            units += n == 4 ? 2 : 1;
            i += Math.max(n, 1);
        }
        return units;
    }

    // Syntax has been checked; decode with Go's unquote rules.
    private String decodeSlow(int start, int stop) {
        StringBuilder sb = new StringBuilder(decodedUnits(start, stop));
        int i = start;
        while (i < stop) {
            int b = in[i] & 0xFF;
            if (b == '\\') {
                int e = in[i + 1] & 0xFF;
                switch (e) {
                    case '"' -> sb.append('"');
                    case '\\' -> sb.append('\\');
                    case '/' -> sb.append('/');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        int r = u4(i + 2);
                        i += 6;
                        if (r >= 0xD800 && r <= 0xDFFF) {
                            // A valid pair is a high surrogate escape followed by a low one.
                            if (r <= 0xDBFF && i + 6 <= stop && in[i] == '\\' && in[i + 1] == 'u') {
                                int r2 = u4(i + 2);
                                if (r2 >= 0xDC00 && r2 <= 0xDFFF) {
                                    sb.append((char) r).append((char) r2);
                                    i += 6;
                                    continue;
                                }
                            }
                            sb.append('\uFFFD');
                            substituted = true;
                        } else {
                            sb.append((char) r);
                        }
                        continue;
                    }
                    default -> throw new IllegalStateException("unreachable: escape checked");
                }
                i += 2;
                continue;
            }
            if (b < 0x80) {
                sb.append((char) b);
                i++;
                continue;
            }
            int n = utf8SequenceLength(in, i, stop);
            if (n == 0) {
                sb.append('\uFFFD');
                substituted = true;
                i++;
                continue;
            }
            int cp;
            if (n == 2) {
                cp = ((b & 0x1F) << 6) | (in[i + 1] & 0x3F);
            } else if (n == 3) {
                cp = ((b & 0x0F) << 12) | ((in[i + 1] & 0x3F) << 6) | (in[i + 2] & 0x3F);
            } else {
                cp = ((b & 0x07) << 18) | ((in[i + 1] & 0x3F) << 12) | ((in[i + 2] & 0x3F) << 6) | (in[i + 3] & 0x3F);
            }
            sb.appendCodePoint(cp);
            i += n;
        }
        return sb.toString();
    }

    /**
     * Length of the valid UTF-8 sequence starting at {@code i} (Go's {@code utf8.DecodeRune}
     * acceptance: no overlongs, no surrogates, at most U+10FFFF), or 0 when invalid.
     */
    static int utf8SequenceLength(byte[] s, int i, int stop) {
        int b0 = s[i] & 0xFF;
        if (b0 < 0x80) {
            return 1;
        }
        if (b0 < 0xC2) {
            return 0;
        }
        if (b0 < 0xE0) {
            return (i + 1 < stop && isCont(s[i + 1])) ? 2 : 0;
        }
        if (b0 < 0xF0) {
            if (i + 2 >= stop) {
                return 0;
            }
            int b1 = s[i + 1] & 0xFF;
            int lo = b0 == 0xE0 ? 0xA0 : 0x80;
            int hi = b0 == 0xED ? 0x9F : 0xBF;
            return (b1 >= lo && b1 <= hi && isCont(s[i + 2])) ? 3 : 0;
        }
        if (b0 < 0xF5) {
            if (i + 3 >= stop) {
                return 0;
            }
            int b1 = s[i + 1] & 0xFF;
            int lo = b0 == 0xF0 ? 0x90 : 0x80;
            int hi = b0 == 0xF4 ? 0x8F : 0xBF;
            return (b1 >= lo && b1 <= hi && isCont(s[i + 2]) && isCont(s[i + 3])) ? 4 : 0;
        }
        return 0;
    }

    private static boolean isCont(byte b) {
        return (b & 0xC0) == 0x80;
    }

    /** True when {@code s[from..to)} is entirely valid UTF-8 (Go's {@code utf8.Valid}). */
    public static boolean isValidUtf8(byte[] s, int from, int to) {
        int i = from;
        while (i < to) {
            if (s[i] >= 0) {
                i++;
                continue;
            }
            int n = utf8SequenceLength(s, i, to);
            if (n == 0) {
                return false;
            }
            i += n;
        }
        return true;
    }

    // ---- generic skipping -----------------------------------------------------------------

    /**
     * Skips one complete value at the current position, checking its syntax, without recursion.
     * Returns the offset of its first byte; {@link #position()} is then just after its last byte.
     */
    public int skipValue() {
        int kind = peekKind();
        int start = pos;
        switch (kind) {
            case '"' -> skipString();
            case 'n' -> readNull();
            case 't', 'f' -> readBoolean();
            case '0' -> scanNumber();
            default -> skipContainer();
        }
        return start;
    }

    /** Returns a copy of the bytes of one complete value (see {@link #skipValue()}). */
    public byte[] readRawValue() {
        int start = skipValue();
        return Arrays.copyOfRange(in, start, pos);
    }

    // Iterative scan of an object or array with Go's depth limit. A small explicit stack of
    // container kinds (bit set) replaces recursion.
    private void skipContainer() {
        int base = depth;
        long[] kinds = new long[4]; // bit = 1 for object
        int local = 0;
        // Each loop iteration is positioned at the start of a value.
        while (true) {
            int c = peekKind();
            if (c == '{' || c == '[') {
                pos++;
                push();
                if ((local >> 6) >= kinds.length) {
                    kinds = Arrays.copyOf(kinds, kinds.length * 2);
                }
                if (c == '{') {
                    kinds[local >> 6] |= 1L << (local & 63);
                } else {
                    kinds[local >> 6] &= ~(1L << (local & 63));
                }
                local++;
                int n = peek();
                if (c == '{') {
                    if (n == '}') {
                        pos++;
                    } else if (n == '"') {
                        skipString();
                        if (peek() != ':') {
                            throw error("invalid character after object key");
                        }
                        pos++;
                        continue; // value follows
                    } else {
                        throw n < 0 ? error("unexpected end of JSON input") : error("invalid character looking for beginning of object key string");
                    }
                } else {
                    if (n == ']') {
                        pos++;
                    } else {
                        continue; // element follows
                    }
                }
                // empty container closed
                depth--;
                local--;
            } else if (c == '"') {
                skipString();
            } else if (c == 'n') {
                readNull();
            } else if (c == 't' || c == 'f') {
                readBoolean();
            } else {
                scanNumber();
            }
            // After a value: close containers or move to the next member/element.
            while (true) {
                if (local == 0) {
                    if (depth != base) {
                        throw new IllegalStateException("depth bookkeeping");
                    }
                    return;
                }
                boolean isObject = (kinds[(local - 1) >> 6] & (1L << ((local - 1) & 63))) != 0;
                int n = peek();
                if (n == ',') {
                    pos++;
                    if (isObject) {
                        if (peek() != '"') {
                            throw error("invalid character looking for beginning of object key string");
                        }
                        skipString();
                        if (peek() != ':') {
                            throw error("invalid character after object key");
                        }
                        pos++;
                    }
                    break; // next value
                }
                if ((isObject && n == '}') || (!isObject && n == ']')) {
                    pos++;
                    depth--;
                    local--;
                    continue;
                }
                if (n < 0) {
                    throw error("unexpected end of JSON input");
                }
                throw error(isObject ? "invalid character after object key:value pair" : "invalid character after array element");
            }
        }
    }
}
