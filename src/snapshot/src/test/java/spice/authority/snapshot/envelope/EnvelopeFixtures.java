package spice.authority.snapshot.envelope;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.payload.PayloadFixtures;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;

/** A fixed test authority, envelopes sealed with it, and a hand-written protobuf encoder. */
final class EnvelopeFixtures {
    static final byte[] SCOPE = filled(32, 0x5A);
    static final long GENERATION = 3;

    private EnvelopeFixtures() {}

    static byte[] filled(int n, int value) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) value);
        return b;
    }

    /** The fixed test key (HMAC key bytes 0..31). */
    static AuthorityKey key() {
        byte[] k = new byte[32];
        for (int i = 0; i < k.length; i++) {
            k[i] = (byte) i;
        }
        try (SecretKeyBytes s = SecretKeyBytes.copyOf(k, SecretAccess.grant())) {
            return new AuthorityKey(SCOPE, GENERATION, s);
        }
    }

    static Snapshot snapshot(String json) {
        try {
            return Snapshot.decode(json.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static Envelope sealed(String json) {
        try (AuthorityKey key = key()) {
            return Envelopes.seal(snapshot(json), key::sign);
        } catch (SigningException e) {
            throw new IllegalStateException(e);
        }
    }

    static Envelope sealedV01() {
        return sealed(PayloadFixtures.V01);
    }

    static byte[] sha256(byte[] b) {
        return HmacSha256.sha256(b);
    }

    /** A mutable set of envelope field values, encoded by hand in canonical field order. */
    static final class Fields {
        byte[] format = spice.authority.snapshot.SnapshotFormat.V1ALPHA2.wire().getBytes(StandardCharsets.UTF_8);
        byte[] runId = "run-1".getBytes(StandardCharsets.UTF_8);
        long lastSequence = 7;
        long lifecycle = 1;
        byte[] payload = PayloadFixtures.V01.getBytes(StandardCharsets.UTF_8);
        byte[] sha256 = EnvelopeFixtures.sha256(payload);
        /** Null: no authority field. */
        byte[] authority;

        Fields runId(String s) {
            runId = s.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        Fields payload(String json) {
            return payload(json.getBytes(StandardCharsets.UTF_8));
        }

        /** Sets the payload and its correct digest. */
        Fields payload(byte[] p) {
            payload = p;
            sha256 = EnvelopeFixtures.sha256(p);
            return this;
        }

        /** A well-shaped authority whose MAC is the real claim when the fields allow one. */
        Fields signed() {
            try (AuthorityKey key = key()) {
                Claim c = key.sign(new ClaimInput(new String(format, StandardCharsets.UTF_8),
                        new String(runId, StandardCharsets.UTF_8), lastSequence, (int) lifecycle, sha256));
                authority = authority(c.scopeId(), c.generation(), c.hmac());
            }
            return this;
        }

        /** A well-shaped authority with a dummy MAC (for structural tests). */
        Fields dummyAuthority() {
            authority = authority(SCOPE, GENERATION, filled(32, 0x11));
            return this;
        }

        byte[] encode() {
            return proto(out -> {
                if (format.length > 0) {
                    out.writeByteArray(1, format);
                }
                if (runId.length > 0) {
                    out.writeByteArray(2, runId);
                }
                if (lastSequence != 0) {
                    out.writeUInt64(3, lastSequence);
                }
                if (lifecycle != 0) {
                    out.writeUInt64(4, lifecycle);
                }
                if (payload.length > 0) {
                    out.writeByteArray(5, payload);
                }
                if (sha256.length > 0) {
                    out.writeByteArray(6, sha256);
                }
                if (authority != null) {
                    out.writeByteArray(7, authority);
                }
            });
        }
    }

    static byte[] authority(byte[] scope, long generation, byte[] mac) {
        return proto(out -> {
            if (scope.length > 0) {
                out.writeByteArray(1, scope);
            }
            if (generation != 0) {
                out.writeUInt64(2, generation);
            }
            if (mac.length > 0) {
                out.writeByteArray(3, mac);
            }
        });
    }

    interface Body {
        void write(CodedOutputStream out) throws IOException;
    }

    static byte[] proto(Body body) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            CodedOutputStream out = CodedOutputStream.newInstance(bytes);
            body.write(out);
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** The generated builder of a parsed envelope (for tests that edit through protobuf). */
    static SnapshotEnvelope.Builder builderOf(Envelope e) {
        try {
            return SnapshotEnvelope.parseFrom(e.toBinary()).toBuilder();
        } catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    static SnapshotAuthority authorityOf(byte[] scope, long gen, byte[] mac) {
        return SnapshotAuthority.newBuilder().setScopeId(ByteString.copyFrom(scope)).setGeneration(gen)
                .setHmacSha256(ByteString.copyFrom(mac)).build();
    }

    /** "OK" or the rule id from parse + structural validation. */
    static String structural(byte[] encoded) {
        try {
            Envelopes.validate(Envelope.parse(encoded));
            return "OK";
        } catch (EnvelopeRejectedException e) {
            return e.rule().id();
        }
    }

    /** "OK" or the rule id (with the payload rule for E-PAYLOAD) from parse + strict validation. */
    static String strict(byte[] encoded) {
        try {
            Envelopes.validateStrict(Envelope.parse(encoded));
            return "OK";
        } catch (EnvelopeRejectedException e) {
            return e.rule().id() + (e.payloadRule() == null ? "" : " " + e.payloadRule().id());
        }
    }
}
