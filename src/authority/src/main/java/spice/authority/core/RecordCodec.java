package spice.authority.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.LengthPrefixed;
import spice.authority.snapshot.json.GoFieldNames;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoJsonWriter;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.JsonSyntaxException;

/**
 * Encodes and verifies record files (wire-format.md d.3) byte-for-byte as the reference does:
 * the record JSON by Go's encoder, the record MAC {@code HMAC(master, LP(domain) || LP(json))},
 * and the signed line {@code {"record":…,"hmac_sha256":"…"}} plus LF.
 *
 * <p>Reading decodes strictly (unknown members and trailing values rejected, names matched
 * case-insensitively, later duplicates win, {@code "snapshot":null} means absent), re-encodes
 * canonically and checks the MAC over that encoding in constant time. Every failure is the one
 * {@link Unverifiable} outcome: a tampered, foreign or malformed record never crashes.
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

    /** The record could not be decoded or verified. Content-free and stackless. */
    public static final class Unverifiable extends Exception {
        private static final long serialVersionUID = 1L;
        static final Unverifiable INSTANCE = new Unverifiable();

        private Unverifiable() {
            super("record unverifiable", null, false, false);
        }
    }

    /** The record JSON exactly as Go's encoder writes it. */
    public static byte[] encodeRecord(RunRecord r) {
        GoJsonWriter w = new GoJsonWriter(512);
        w.ascii("{\"version\":").unsigned(RunRecord.VERSION)
                .ascii(",\"scope_id\":").string(r.scopeIdHex())
                .ascii(",\"authority_key_generation\":").unsigned(r.keyGeneration())
                .ascii(",\"run_id\":").string(r.runId())
                .ascii(",\"run_generation\":").unsigned(r.runGeneration())
                .ascii(",\"phase\":").string(r.phase().name());
        if (r.snapshot() != null) {
            RunRecord.SnapshotBinding s = r.snapshot();
            w.ascii(",\"snapshot\":{\"format\":").string(RunRecord.SnapshotBinding.FORMAT)
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
            throw Unverifiable.INSTANCE;
        }
        try {
            GoJsonReader r = new GoJsonReader(file);
            RawRecord rec = new RawRecord();
            if (r.peekKind() != '{') {
                throw Unverifiable.INSTANCE;
            }
            forEachMember(r, LINE_FIELDS, field -> {
                switch (field) {
                    case 0 -> decodeRecord(r, rec);
                    default -> rec.lineMacHex = string(r, rec.lineMacHex);
                }
            });
            r.skipWhitespace();
            if (!r.atEnd()) {
                throw Unverifiable.INSTANCE;
            }
            byte[] mac = parseHex32(rec.lineMacHex);
            RunRecord record = rec.toRecord();
            byte[] expected = master.compute(macInput(encodeRecord(record)));
            if (!MessageDigest.isEqual(expected, mac)) {
                throw Unverifiable.INSTANCE;
            }
            return record;
        } catch (JsonSyntaxException | IllegalArgumentException e) {
            throw Unverifiable.INSTANCE;
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
                throw Unverifiable.INSTANCE;
            }
            RunPhase p = RunPhase.parse(phase).orElseThrow(() -> Unverifiable.INSTANCE);
            RunRecord.SnapshotBinding binding = null;
            if (p == RunPhase.SUSPENDED) {
                if (snapshot == null || !RunRecord.SnapshotBinding.FORMAT.equals(snapshot.format)) {
                    throw Unverifiable.INSTANCE;
                }
                binding = new RunRecord.SnapshotBinding(snapshot.lastSequence, (int) Math.min(snapshot.lifecycle, 1000),
                        parseHex32(snapshot.payloadSha256), parseHex32(snapshot.authorityHmac));
            } else if (snapshot != null) {
                throw Unverifiable.INSTANCE;
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
            throw Unverifiable.INSTANCE;
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
                        throw Unverifiable.INSTANCE;
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
                        throw Unverifiable.INSTANCE;
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
                throw Unverifiable.INSTANCE;
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
        throw Unverifiable.INSTANCE;
    }

    private static long unsigned(GoJsonReader r, long current) throws Unverifiable {
        int k = r.peekKind();
        if (k == '0') {
            long v = r.readNumberAsUnsigned();
            if (!r.lastNumberWasUnsigned()) {
                throw Unverifiable.INSTANCE;
            }
            return v;
        }
        if (k == 'n') {
            r.readNull();
            return current;
        }
        throw Unverifiable.INSTANCE;
    }

    /** Hex of exactly 32 bytes; upper case accepted (Go's hex.DecodeString). */
    static byte[] parseHex32(String hex) throws Unverifiable {
        if (hex.length() != 64) {
            throw Unverifiable.INSTANCE;
        }
        try {
            return HexFormat.of().parseHex(hex);
        } catch (IllegalArgumentException e) {
            throw Unverifiable.INSTANCE;
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
