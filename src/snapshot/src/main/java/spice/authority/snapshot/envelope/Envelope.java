package spice.authority.snapshot.envelope;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;

/**
 * A {@code spice.agent.engine.v1.SnapshotEnvelope} as received or built, before or after
 * validation. Holds the exact field values; says nothing about validity until passed to
 * {@link Envelopes#validate} and nothing about authenticity until a keyed verifier accepts it.
 *
 * <p><b>Guarantees.</b> An instance parsed by {@link #parse} came from a canonical binary
 * encoding without unknown fields at any depth: {@link #toBinary()} returns exactly the parsed
 * bytes. Immutable; {@link #toString()} shows no payload content and no claim MAC.
 */
public final class Envelope {
    /** Upper bound on an encoded envelope: the 16 MiB payload bound plus field overhead. */
    public static final int MAX_ENCODED_BYTES = (16 << 20) + 1024;

    private final SnapshotEnvelope proto;
    private final byte[] encoded;

    private Envelope(SnapshotEnvelope proto, byte[] encoded) {
        this.proto = proto;
        this.encoded = encoded;
    }

    /** Builds an envelope from field values (used by sealing and by tests). */
    static Envelope of(String format, String runId, long lastSequence, int lifecycle, byte[] payload,
                       byte[] sha256, Claim claim) {
        SnapshotEnvelope.Builder b = SnapshotEnvelope.newBuilder()
                .setFormat(format)
                .setRunId(runId)
                .setLastSequence(lastSequence)
                .setLifecycleValue(lifecycle)
                .setPayload(UnsafeByteOperations.unsafeWrap(payload))
                .setSha256(ByteString.copyFrom(sha256));
        if (claim != null) {
            b.setAuthority(SnapshotAuthority.newBuilder()
                    .setScopeId(ByteString.copyFrom(claim.scopeId()))
                    .setGeneration(claim.generation())
                    .setHmacSha256(ByteString.copyFrom(claim.hmac())));
        }
        SnapshotEnvelope p = b.build();
        return new Envelope(p, p.toByteArray());
    }

    /**
     * Parses the binary protobuf encoding strictly.
     *
     * @throws EnvelopeRejectedException {@code E-SIZE} for empty or oversized input (checked before
     *     parsing), {@code E-ENCODING} for malformed protobuf, invalid UTF-8 in strings, unknown
     *     fields at any depth, or bytes that do not re-serialize identically
     */
    public static Envelope parse(byte[] bytes) throws EnvelopeRejectedException {
        if (bytes.length == 0 || bytes.length > MAX_ENCODED_BYTES) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_SIZE);
        }
        byte[] copy = bytes.clone();
        SnapshotEnvelope p;
        try {
            CodedInputStream in = CodedInputStream.newInstance(copy);
            in.setRecursionLimit(8);
            in.setSizeLimit(MAX_ENCODED_BYTES);
            p = SnapshotEnvelope.parseFrom(in);
            in.checkLastTagWas(0);
        } catch (java.io.IOException | RuntimeException e) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_ENCODING);
        }
        if (!p.getUnknownFields().asMap().isEmpty()
                || (p.hasAuthority() && !p.getAuthority().getUnknownFields().asMap().isEmpty())) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_ENCODING);
        }
        if (!Arrays.equals(p.toByteArray(), copy)) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_ENCODING);
        }
        return new Envelope(p, copy);
    }

    /**
     * Parses the protobuf JSON mapping (unknown members rejected), then holds the canonical binary
     * encoding of the result.
     */
    public static Envelope parseJson(String json) throws EnvelopeRejectedException {
        if (json.length() > MAX_ENCODED_BYTES * 2L) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_SIZE);
        }
        SnapshotEnvelope.Builder b = SnapshotEnvelope.newBuilder();
        try {
            JsonFormat.parser().merge(json, b);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_ENCODING);
        }
        byte[] encoded = b.build().toByteArray();
        if (encoded.length == 0 || encoded.length > MAX_ENCODED_BYTES) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_SIZE);
        }
        return parse(encoded);
    }

    /** The canonical binary encoding (a copy). */
    public byte[] toBinary() {
        return encoded.clone();
    }

    /** The protobuf JSON mapping (field names in lowerCamelCase, bytes in base64). */
    public String toJson() {
        try {
            return JsonFormat.printer().print(proto);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * {@link #toJson()} as UTF-8, byte for byte, built for a large envelope: the payload's base64
     * is streamed into the one output array (JsonFormat builds it as a string, escapes it into a
     * growing buffer and copies it again: about five times a 16 MiB payload's encoding at once).
     */
    public byte[] toJsonBytes() {
        // Everything but the payload through JsonFormat (small); the payload, field 5, goes where
        // JsonFormat puts it: after the fields numbered below it, before those above it.
        SnapshotEnvelope without = proto.toBuilder().clearPayload().build();
        String rest;
        try {
            rest = JsonFormat.printer().print(without);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
        com.google.protobuf.ByteString payload = proto.getPayload();
        if (payload.isEmpty()) {
            return rest.getBytes(StandardCharsets.UTF_8);
        }
        // Top-level members start at "\n  \"" (escaped values never hold a raw line break), each
        // but the last followed by ','. Payload goes before sha256 (6) or authority (7), or last.
        String next = !proto.getSha256().isEmpty() ? "\n  \"sha256\": " : proto.hasAuthority() ? "\n  \"authority\": " : null;
        int at = next != null ? rest.indexOf(next) : rest.lastIndexOf("\n}");
        if (at < 0) {
            throw new IllegalStateException("unexpected JSON mapping layout");
        }
        String open = (next == null && at > 1 ? "," : "") + "\n  \"payload\": \"";
        String close = next != null ? "\"," : "\"";
        byte[] head = (rest.substring(0, at) + open).getBytes(StandardCharsets.UTF_8);
        byte[] tail = (close + rest.substring(at)).getBytes(StandardCharsets.UTF_8);
        long encodedLength = 4L * ((payload.size() + 2) / 3);
        byte[] out = new byte[Math.toIntExact(head.length + encodedLength + tail.length)];
        System.arraycopy(head, 0, out, 0, head.length);
        int[] pos = {head.length};
        java.io.OutputStream into = new java.io.OutputStream() {
            @Override
            public void write(int b) {
                out[pos[0]++] = (byte) b;
            }

            @Override
            public void write(byte[] b, int off, int len) {
                System.arraycopy(b, off, out, pos[0], len);
                pos[0] += len;
            }
        };
        try (java.io.OutputStream b64 = java.util.Base64.getEncoder().wrap(into)) {
            payload.writeTo(b64);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e); // an array never fails
        }
        System.arraycopy(tail, 0, out, pos[0], tail.length);
        return out;
    }

    public int encodedLength() {
        return encoded.length;
    }

    public String format() {
        return proto.getFormat();
    }

    public String runId() {
        return proto.getRunId();
    }

    /** Unsigned. */
    public long lastSequence() {
        return proto.getLastSequence();
    }

    /** The raw lifecycle number (may be 0 or unknown before validation). */
    public int lifecycleNumber() {
        return proto.getLifecycleValue();
    }

    /** The enum name for display, e.g. {@code SNAPSHOT_LIFECYCLE_SUSPENDED}, or {@code UNKNOWN(7)}. */
    public String lifecycleName() {
        return switch (proto.getLifecycleValue()) {
            case 0 -> "SNAPSHOT_LIFECYCLE_UNSPECIFIED";
            case 1 -> "SNAPSHOT_LIFECYCLE_SUSPENDED";
            case 2 -> "SNAPSHOT_LIFECYCLE_COMPLETED";
            case 3 -> "SNAPSHOT_LIFECYCLE_FAILED";
            case 4 -> "SNAPSHOT_LIFECYCLE_CANCELLED";
            default -> "UNKNOWN(" + proto.getLifecycleValue() + ")";
        };
    }

    /** A copy of the payload bytes. */
    public byte[] payload() {
        return proto.getPayload().toByteArray();
    }

    public int payloadLength() {
        return proto.getPayload().size();
    }

    /** A copy of the {@code sha256} field as received. */
    public byte[] sha256() {
        return proto.getSha256().toByteArray();
    }

    public boolean hasAuthority() {
        return proto.hasAuthority();
    }

    /** The claim when present and well-shaped (E-AUTH-SHAPE), else empty. */
    public Optional<Claim> claim() {
        if (!proto.hasAuthority()) {
            return Optional.empty();
        }
        SnapshotAuthority a = proto.getAuthority();
        byte[] scope = a.getScopeId().toByteArray();
        byte[] mac = a.getHmacSha256().toByteArray();
        if (!Claim.isWellShaped(scope, a.getGeneration(), mac)) {
            return Optional.empty();
        }
        return Optional.of(new Claim(scope, a.getGeneration(), mac));
    }

    /** Raw authority fields for display: scope length, generation, MAC length (no MAC bytes). */
    public int authorityScopeLength() {
        return proto.getAuthority().getScopeId().size();
    }

    public byte[] authorityScopeId() {
        return proto.getAuthority().getScopeId().toByteArray();
    }

    public long authorityGeneration() {
        return proto.getAuthority().getGeneration();
    }

    public int authorityMacLength() {
        return proto.getAuthority().getHmacSha256().size();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Envelope e && Arrays.equals(encoded, e.encoded);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(encoded);
    }

    @Override
    public String toString() {
        // An envelope not yet validated may carry any run_id (16 MiB, line breaks): shown bounded
        // and with control characters escaped, so a toString in a log line stays one short line.
        return "Envelope[run_id=" + spice.authority.snapshot.json.SafeText.bounded(proto.getRunId(), 80) + ", last_sequence=" + Long.toUnsignedString(proto.getLastSequence())
                + ", lifecycle=" + lifecycleName() + ", payload=" + proto.getPayload().size() + " bytes, sha256="
                + GoText.hex(proto.getSha256().toByteArray()) + "]";
    }
}
