package spice.authority.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.LengthPrefixed;
import spice.authority.snapshot.json.GoFieldNames;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoJsonWriter;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.JsonSyntaxException;
import spice.authority.snapshot.json.SafeText;

/**
 * Encodes and verifies record files (wire-format.md d.3) byte-for-byte as the reference does:
 * the record JSON by Go's encoder, the record MAC {@code HMAC(master, LP(domain) || LP(json))},
 * and the signed line {@code {"record":…,"hmac_sha256":"…"}} plus LF.
 *
 * <p>Reading decodes strictly (unknown members and trailing values rejected, names matched
 * case-insensitively, later duplicates win, {@code "snapshot":null} means absent), re-encodes
 * canonically and checks the MAC over that encoding in constant time. A SUSPENDED record's
 * {@code snapshot.format} is the format its claim was signed in (any {@link SnapshotFormat}); a
 * record whose MAC verifies but whose format this build does not speak is unsupported, not
 * forged. Every failure is one {@link Unverifiable} outcome with its reason: a tampered, foreign
 * or malformed record never crashes.
 */
public final class RecordCodec {
    /** The 35-byte record MAC domain. */
    public static final String DOMAIN = "spice.agent.run-authority-record/v1";
    /** The largest record file read or written, LF included. */
    public static final int MAX_FILE_BYTES = 16_384;

    private static final String[] LINE_FIELDS = {"record", "hmac_sha256"};
    private static final String[] RECORD_FIELDS = {
        "version", "scope_id", "authority_key_generation", "run_id", "run_generation", "phase", "snapshot"};
    private static final String[] SNAPSHOT_FIELDS = {
        "format", "last_sequence", "lifecycle", "payload_sha256", "authority_hmac_sha256"};

    private RecordCodec() {}

    /**
     * The record could not be decoded or verified, and why ({@link UnreadableReason}): stackless,
     * and content-free but for the format text of {@link UnreadableReason#UNSUPPORTED_FORMAT},
     * which is public (bounded and escaped).
     */
    public static final class Unverifiable extends Exception {
        private static final long serialVersionUID = 1L;
        static final Unverifiable MALFORMED = new Unverifiable(UnreadableReason.MALFORMED, null);
        static final Unverifiable BAD_MAC = new Unverifiable(UnreadableReason.BAD_MAC, null);

        private final transient UnreadableReason reason;
        private final String format;

        private Unverifiable(UnreadableReason reason, String format) {
            super("record unverifiable: " + reason.wire(), null, false, false);
            this.reason = reason;
            this.format = format;
        }

        /** A record whose MAC verifies but whose snapshot format this build does not speak. */
        static Unverifiable unsupportedFormat(String format) {
            return new Unverifiable(UnreadableReason.UNSUPPORTED_FORMAT, SafeText.bounded(format, 64));
        }

        public UnreadableReason reason() {
            return reason;
        }

        /** For {@link UnreadableReason#UNSUPPORTED_FORMAT}: the record's format text (bounded); else null. */
        public String format() {
            return format;
        }
    }

    /** The record JSON exactly as Go's encoder writes it. */
    public static byte[] encodeRecord(RunRecord r) {
        return encodeRecord(r, r.snapshot() == null ? null : r.snapshot().format().wire());
    }

    /** {@link #encodeRecord(RunRecord)} with the binding's format written as {@code formatWire}. */
    private static byte[] encodeRecord(RunRecord r, String formatWire) {
        GoJsonWriter w = new GoJsonWriter(512);
        w.ascii("{\"version\":").unsigned(RunRecord.VERSION)
                .ascii(",\"scope_id\":").string(r.scopeIdHex())
                .ascii(",\"authority_key_generation\":").unsigned(r.keyGeneration())
                .ascii(",\"run_id\":").string(r.runId())
                .ascii(",\"run_generation\":").unsigned(r.runGeneration())
                .ascii(",\"phase\":").string(r.phase().name());
        if (r.snapshot() != null) {
            RunRecord.SnapshotBinding s = r.snapshot();
            w.ascii(",\"snapshot\":{\"format\":").string(formatWire)
                    .ascii(",\"last_sequence\":").unsigned(s.lastSequence())
                    .ascii(",\"lifecycle\":").unsigned(s.lifecycle())
                    .ascii(",\"payload_sha256\":").string(GoText.hex(s.payloadSha256()))
                    .ascii(",\"authority_hmac_sha256\":").string(GoText.hex(s.authorityHmac()))
                    .raw('}');
        }
        w.raw('}');
        return w.toByteArray();
    }

    /** The record MAC input: LP(domain) || LP(record JSON). */
    public static byte[] macInput(byte[] recordJson) {
        return new LengthPrefixed(64 + recordJson.length).add(DOMAIN).add(recordJson).toByteArray();
    }

    /** The whole file content: the signed line and one LF. */
    public static byte[] signedFile(RunRecord r, HmacSha256 master) {
        byte[] json = encodeRecord(r);
        byte[] mac = master.compute(macInput(json));
        byte[] head = "{\"record\":".getBytes(StandardCharsets.US_ASCII);
        byte[] mid = ",\"hmac_sha256\":\"".getBytes(StandardCharsets.US_ASCII);
        byte[] hex = GoText.hex(mac).getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[head.length + json.length + mid.length + hex.length + 3];
        int p = 0;
        System.arraycopy(head, 0, out, p, head.length);
        p += head.length;
        System.arraycopy(json, 0, out, p, json.length);
        p += json.length;
        System.arraycopy(mid, 0, out, p, mid.length);
        p += mid.length;
        System.arraycopy(hex, 0, out, p, hex.length);
        p += hex.length;
        out[p++] = '"';
        out[p++] = '}';
        out[p] = '\n';
        if (out.length > MAX_FILE_BYTES) {
            throw new IllegalArgumentException("record too large");
        }
        return out;
    }

    /**
     * Decodes a record file and verifies its MAC over the canonical re-encoding.
     *
     * @throws Unverifiable for every decoding, validation or MAC failure
     */
    public static RunRecord verifyFile(byte[] file, HmacSha256 master) throws Unverifiable {
        if (file.length == 0 || file.length > MAX_FILE_BYTES) {
            throw Unverifiable.MALFORMED;
        }
        try {
            GoJsonReader r = new GoJsonReader(file);
            RawRecord rec = new RawRecord();
            if (r.peekKind() != '{') {
                throw Unverifiable.MALFORMED;
            }
            forEachMember(r, LINE_FIELDS, field -> {
                switch (field) {
                    case 0 -> decodeRecord(r, rec);
                    default -> rec.lineMacHex = string(r, rec.lineMacHex);
                }
            });
            r.skipWhitespace();
            if (!r.atEnd()) {
                throw Unverifiable.MALFORMED;
            }
            byte[] mac = parseHex32(rec.lineMacHex);
            RunRecord record = rec.toRecord();
            // The MAC covers the format text as written: a format this build does not speak is
            // verified as that text, so an unknown format is told apart from a forged record.
            String formatWire = rec.snapshot == null ? null : rec.snapshot.format;
            byte[] expected = master.compute(macInput(encodeRecord(record, formatWire)));
            if (!MessageDigest.isEqual(expected, mac)) {
                throw Unverifiable.BAD_MAC;
            }
            if (formatWire != null && SnapshotFormat.fromWire(formatWire).isEmpty()) {
                throw Unverifiable.unsupportedFormat(formatWire);
            }
            return record;
        } catch (JsonSyntaxException | IllegalArgumentException e) {
            throw Unverifiable.MALFORMED;
        }
    }

    /** Mutable decoding state with Go's zero values. */
    private static final class RawRecord {
        long version;
        String scopeId = "";
        long keyGeneration;
        String runId = "";
        long runGeneration;
        String phase = "";
        RawSnapshot snapshot;
        /** The signed line's {@code hmac_sha256}, beside the record. */
        String lineMacHex = "";

        RunRecord toRecord() throws Unverifiable {
            if (version != RunRecord.VERSION) {
                throw Unverifiable.MALFORMED;
            }
            RunPhase p = RunPhase.parse(phase).orElseThrow(() -> Unverifiable.MALFORMED);
            RunRecord.SnapshotBinding binding = null;
            if (p == RunPhase.SUSPENDED) {
                if (snapshot == null) {
                    throw Unverifiable.MALFORMED;
                }
                // An unknown format stands in as v1alpha2 until the MAC over the text as written
                // is checked; verifyFile then refuses it as unsupported, never returns it.
                SnapshotFormat format = SnapshotFormat.fromWire(snapshot.format).orElse(SnapshotFormat.V1ALPHA2);
                binding = new RunRecord.SnapshotBinding(format, snapshot.lastSequence, (int) Math.min(snapshot.lifecycle, 1000),
                        parseHex32(snapshot.payloadSha256), parseHex32(snapshot.authorityHmac));
            } else if (snapshot != null) {
                throw Unverifiable.MALFORMED;
            }
            // Throws IllegalArgumentException (mapped to Unverifiable) for any other rule.
            return new RunRecord(scopeId, keyGeneration, runId, runGeneration, p, binding);
        }
    }

    private static final class RawSnapshot {
        String format = "";
        long lastSequence;
        long lifecycle;
        String payloadSha256 = "";
        String authorityHmac = "";
    }

    private static void decodeRecord(GoJsonReader r, RawRecord rec) throws Unverifiable {
        int kind = r.peekKind();
        if (kind == 'n') {
            r.readNull();
            return;
        }
        if (kind != '{') {
            throw Unverifiable.MALFORMED;
        }
        forEachMember(r, RECORD_FIELDS, field -> {
            switch (field) {
                case 0 -> rec.version = unsigned(r, rec.version);
                case 1 -> rec.scopeId = string(r, rec.scopeId);
                case 2 -> rec.keyGeneration = unsigned(r, rec.keyGeneration);
                case 3 -> {
                    boolean text = r.peekKind() == '"';
                    rec.runId = string(r, rec.runId);
                    if (text && r.lastStringSubstituted()) {
                        // SECURITY: the MAC covers the re-encoding; a run ID the reader had to
                        // repair (U+FFFD) is not the one in the file: never a valid record.
                        throw Unverifiable.MALFORMED;
                    }
                }
                case 4 -> rec.runGeneration = unsigned(r, rec.runGeneration);
                case 5 -> rec.phase = string(r, rec.phase);
                case 6 -> {
                    int k = r.peekKind();
                    if (k == 'n') {
                        r.readNull();
                        rec.snapshot = null; // a JSON null sets the pointer to nil
                    } else if (k == '{') {
                        if (rec.snapshot == null) {
                            rec.snapshot = new RawSnapshot();
                        }
                        decodeSnapshot(r, rec.snapshot);
                    } else {
                        throw Unverifiable.MALFORMED;
                    }
                }
                default -> throw new AssertionError(field);
            }
        });
    }

    private static void decodeSnapshot(GoJsonReader r, RawSnapshot s) throws Unverifiable {
        forEachMember(r, SNAPSHOT_FIELDS, field -> {
            switch (field) {
                case 0 -> s.format = string(r, s.format);
                case 1 -> s.lastSequence = unsigned(r, s.lastSequence);
                case 2 -> s.lifecycle = unsigned(r, s.lifecycle);
                case 3 -> s.payloadSha256 = string(r, s.payloadSha256);
                default -> s.authorityHmac = string(r, s.authorityHmac);
            }
        });
    }

    /** Reads the value of one known member; {@code field} indexes the caller's field names. */
    @FunctionalInterface
    private interface Member {
        void read(int field) throws Unverifiable;
    }

    /**
     * Reads an object member by member, each through {@code member} with its index in
     * {@code fields} (Go's case-folded name match); any other member makes the record unverifiable.
     */
    private static void forEachMember(GoJsonReader r, String[] fields, Member member) throws Unverifiable {
        r.beginObject();
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            int field = GoFieldNames.match(key, fields);
            if (field < 0) {
                throw Unverifiable.MALFORMED;
            }
            member.read(field);
        }
    }

    private static String string(GoJsonReader r, String current) throws Unverifiable {
        int k = r.peekKind();
        if (k == '"') {
            return r.readString();
        }
        if (k == 'n') {
            r.readNull();
            return current;
        }
        throw Unverifiable.MALFORMED;
    }

    private static long unsigned(GoJsonReader r, long current) throws Unverifiable {
        int k = r.peekKind();
        if (k == '0') {
            long v = r.readNumberAsUnsigned();
            if (!r.lastNumberWasUnsigned()) {
                throw Unverifiable.MALFORMED;
            }
            return v;
        }
        if (k == 'n') {
            r.readNull();
            return current;
        }
        throw Unverifiable.MALFORMED;
    }

    /** Hex of exactly 32 bytes; upper case accepted (Go's hex.DecodeString). */
    static byte[] parseHex32(String hex) throws Unverifiable {
        if (hex.length() != 64) {
            throw Unverifiable.MALFORMED;
        }
        try {
            return HexFormat.of().parseHex(hex);
        } catch (IllegalArgumentException e) {
            throw Unverifiable.MALFORMED;
        }
    }

    /**
     * {@code run-<64 hex of SHA-256(UTF-8 run ID)>}: the stem of the run's lock and state files.
     *
     * @throws IllegalArgumentException when the run ID is not valid Unicode text (never reached
     *     through {@link RunRecord#validRunId}; a replacing encoder would give colliding names)
     */
    public static String fileStem(String runId) {
        return "run-" + GoText.hex(HmacSha256.sha256(GoText.utf8Exact(runId)));
    }
}
