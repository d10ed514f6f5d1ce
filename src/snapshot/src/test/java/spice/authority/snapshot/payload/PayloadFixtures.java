package spice.authority.snapshot.payload;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.util.HexFormat;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.json.GoJsonWriter;

/**
 * Helpers for payload tests: the two canonical base payloads of the public corpus, minimal text
 * edits that insist on exactly one match, and a verdict function that returns {@code "OK"} or the
 * rule id of the first broken rule.
 */
public final class PayloadFixtures {
    /** valid-01: single user message, suspended after turn 1 of 3. */
    public static final String V01 = text("payload-corpus/public/valid-01-minimal-suspended.json");
    /** valid-03: completed, two tool rounds, call-a/call-b answered by two tool messages, then call-c. */
    public static final String V03 = text("payload-corpus/public/valid-03-completed-two-rounds.json");

    /** v1alpha3 valid-01: V01's content with a workspace fingerprint, compatibility identity tests:v1. */
    public static final String V3_01 = text("payload-corpus/v1alpha3/valid-01-minimal-suspended.json");
    /** v1alpha3 valid-06: a workspace fingerprint with an empty compatibility identity. */
    public static final String V3_06 = text("payload-corpus/v1alpha3/valid-06-workspace-without-compat.json");

    /** The verdict for an accepted payload. */
    public static final String OK = "OK";

    private PayloadFixtures() {}

    public static String text(String relative) {
        return new String(SpecFiles.bytes(relative), UTF_8);
    }

    public static byte[] utf8(String s) {
        return s.getBytes(UTF_8);
    }

    /** Replaces the one occurrence of {@code from}; fails loudly when it occurs zero or several times. */
    public static String edit(String base, String from, String to) {
        int at = base.indexOf(from);
        if (at < 0 || base.indexOf(from, at + 1) >= 0) {
            throw new IllegalArgumentException("edit anchor must occur exactly once: " + from);
        }
        return base.substring(0, at) + to + base.substring(at + from.length());
    }

    /** Replaces every occurrence of {@code from} (at least one). */
    public static String editAll(String base, String from, String to) {
        if (!base.contains(from)) {
            throw new IllegalArgumentException("edit anchor not found: " + from);
        }
        return base.replace(from, to);
    }

    /** {@code "OK"} when the payload is accepted, else the id of the rule that rejected it. */
    public static String verdict(byte[] payload) {
        try {
            Snapshot.decode(payload);
            return OK;
        } catch (PayloadRejectedException e) {
            return e.rule().id();
        }
    }

    public static String verdict(String json) {
        return verdict(utf8(json));
    }

    /** {@link #verdict(byte[])} accepting only {@code accepted}. */
    public static String verdict(String json, java.util.Set<spice.authority.snapshot.SnapshotFormat> accepted) {
        try {
            Snapshot.decode(utf8(json), accepted);
            return OK;
        } catch (PayloadRejectedException e) {
            return e.rule().id();
        }
    }

    /** The canonical JSON string literal (with quotes) for {@code s}, as the Go encoder writes it. */
    public static String quote(String s) {
        return new String(new GoJsonWriter(s.length() + 2).string(s).toByteArray(), UTF_8);
    }

    public static String repeat(String s, int n) {
        return s.repeat(n);
    }

    /**
     * The UTF-8 bytes of {@code json} with every occurrence of the ASCII {@code marker} replaced by
     * {@code replacement} (which may be invalid UTF-8).
     */
    public static byte[] withBytes(String json, String marker, byte[] replacement) {
        byte[] in = utf8(json);
        byte[] m = utf8(marker);
        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + replacement.length);
        int found = 0;
        for (int i = 0; i < in.length; ) {
            if (i + m.length <= in.length && java.util.Arrays.equals(in, i, i + m.length, m, 0, m.length)) {
                out.writeBytes(replacement);
                i += m.length;
                found++;
            } else {
                out.write(in[i++]);
            }
        }
        if (found == 0) {
            throw new IllegalArgumentException("marker not found: " + marker);
        }
        return out.toByteArray();
    }

    public static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    /** {@code n} copies of {@code bytes}. */
    public static byte[] times(byte[] bytes, int n) {
        byte[] out = new byte[bytes.length * n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(bytes, 0, out, i * bytes.length, bytes.length);
        }
        return out;
    }
}
