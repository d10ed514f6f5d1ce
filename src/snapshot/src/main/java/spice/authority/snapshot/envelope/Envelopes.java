package spice.authority.snapshot.envelope;

import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CancellationException;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.json.GoFieldNames;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.JsonSyntaxException;
import spice.authority.snapshot.json.SafeText;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Envelope construction, structural validation and keyed verification.
 *
 * <p><b>Guarantees.</b> {@link #seal} cannot produce an unsigned envelope, and takes run ID, last
 * sequence and lifecycle from the validated payload, so they cannot disagree. {@link #validate}
 * applies wire-format.md a.3 in order and reports the first broken rule. {@link #validateStrict}
 * additionally requires a valid canonical payload of the envelope's format that agrees with the
 * envelope. Every {@link SnapshotFormat} is spoken: the envelope's {@code format} is the claim
 * input's, so the MAC binds it; a format that is unknown, or not among those a caller accepts, is
 * {@link EnvelopeRule#E_FORMAT} naming it. A v1alpha3 envelope is also held to its cap of
 * 16 MiB + 295 encoded bytes (E-SIZE); unknown fields are refused at every depth in every format
 * ({@link Envelope#parse}).
 * Structure and the unkeyed digest never establish authority: only {@link #verify} with a keyed
 * verifier does, and it fails with the one {@link VerificationException}.
 */
public final class Envelopes {
    private static final String[] RUN_ID_FIELD = {"run_id"};
    private static final Set<SnapshotFormat> ALL = EnumSet.allOf(SnapshotFormat.class);

    private Envelopes() {}

    /** An envelope that passed a.3: its claim input and well-shaped claim. */
    public record Validated(Envelope envelope, ClaimInput claimInput, Claim claim) {}

    /** An envelope that passed a.3 and the stricter payload and agreement rules. */
    public record Strict(Validated validated, Snapshot snapshot) {}

    /**
     * Builds and signs an envelope for a validated snapshot (a.4): digest, claim input from the
     * snapshot's own fields, one signer call, claim shape check.
     *
     * @throws SigningException for any signer failure (opaque, no cause)
     * @throws CancellationException when the signer reports cancellation
     */
    public static Envelope seal(Snapshot snapshot, Signer signer) throws SigningException {
        if (signer == null) {
            throw new SigningException();
        }
        Unsigned unsigned = unsigned(snapshot);
        Claim claim;
        try {
            claim = signer.sign(unsigned.claimInput());
        } catch (CancellationException e) {
            throw e;
        } catch (Exception | Error e) {
            if (e instanceof VirtualMachineError vme) {
                throw vme;
            }
            throw new SigningException();
        }
        return unsigned.seal(claim);
    }

    /**
     * The first half of {@link #seal}, for a signer whose failures the caller must see as they
     * are (the run authority's typed outcomes): the digest and the claim input, taken from the
     * snapshot's own fields; {@link Unsigned#seal} then builds the envelope with the claim.
     */
    public static Unsigned unsigned(Snapshot snapshot) {
        byte[] payload = snapshot.canonicalBytes();
        byte[] digest = HmacSha256.sha256(payload);
        ClaimInput input = new ClaimInput(snapshot.format(), snapshot.runId(), snapshot.lastSequence(),
                snapshot.status().lifecycleNumber(), digest);
        return new Unsigned(snapshot, payload, digest, input);
    }

    /**
     * A validated snapshot, digested, waiting for its claim.
     *
     * <p><b>Guarantees.</b> The envelope {@link #seal} builds carries the claim given, the payload
     * and digest of the snapshot and the snapshot's own run ID, last sequence and lifecycle; it is
     * never built without a claim.
     */
    public static final class Unsigned {
        private final Snapshot snapshot;
        private final byte[] payload;
        private final byte[] digest;
        private final ClaimInput input;

        private Unsigned(Snapshot snapshot, byte[] payload, byte[] digest, ClaimInput input) {
            this.snapshot = snapshot;
            this.payload = payload;
            this.digest = digest;
            this.input = input;
        }

        /** What the signer signs. */
        public ClaimInput claimInput() {
            return input;
        }

        /**
         * The envelope with {@code claim}, which must have been made for {@link #claimInput()}.
         *
         * @throws SigningException when there is no claim
         */
        public Envelope seal(Claim claim) throws SigningException {
            if (claim == null) {
                throw new SigningException();
            }
            return Envelope.of(snapshot.format().wire(), snapshot.runId(), snapshot.lastSequence(),
                    snapshot.status().lifecycleNumber(), payload, digest, claim);
        }
    }

    /** Structural validation, wire-format.md a.3, in order, for an envelope of any known format. */
    public static Validated validate(Envelope e) throws EnvelopeRejectedException {
        return validate(e, ALL);
    }

    /**
     * Structural validation, wire-format.md a.3, in order, accepting the formats in
     * {@code accepted} only.
     *
     * @throws EnvelopeRejectedException E-FORMAT, naming the format text, when it names no format
     *     or one not accepted; E-SIZE for a v1alpha3 envelope over 16,777,511 encoded bytes
     */
    public static Validated validate(Envelope e, Set<SnapshotFormat> accepted) throws EnvelopeRejectedException {
        SnapshotFormat format = SnapshotFormat.fromWire(e.format()).orElse(null);
        if (format == null || !accepted.contains(format)) {
            throw EnvelopeRejectedException.naming(EnvelopeRule.E_FORMAT, "snapshot format \""
                    + SafeText.bounded(e.format(), 64) + "\" is " + (format == null ? "unknown" : "not accepted here"));
        }
        if (e.encodedLength() > format.maxEnvelopeBytes()) {
            throw EnvelopeRejectedException.naming(EnvelopeRule.E_SIZE, format.wire() + " envelope exceeds "
                    + format.maxEnvelopeBytes() + " encoded bytes");
        }
        // A parsed envelope's strings are valid UTF-8 (E-ENCODING); the text check keeps an
        // envelope built in Java from reaching the claim input with an unpaired surrogate.
        if (!GoText.isToken(e.runId(), 128) || !GoText.isValidUnicode(e.runId())) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_RUNID);
        }
        if (e.lastSequence() == 0 || e.lastSequence() == -1L) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_SEQ);
        }
        if (LifecycleStatus.fromLifecycleNumber(e.lifecycleNumber()) == null) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_LIFECYCLE);
        }
        if (e.payloadLength() < 1 || e.payloadLength() > Snapshot.MAX_PAYLOAD_BYTES) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_PAYLOAD_SIZE);
        }
        byte[] payload = e.payload();
        byte[] digest = HmacSha256.sha256(payload);
        if (!MessageDigest.isEqual(digest, e.sha256())) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_DIGEST);
        }
        String payloadRunId = lenientRunId(payload);
        if (!payloadRunId.equals(e.runId())) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_RUNID_MATCH);
        }
        Claim claim = e.claim().orElseThrow(() -> new EnvelopeRejectedException(EnvelopeRule.E_AUTH_SHAPE));
        ClaimInput input = new ClaimInput(format, e.runId(), e.lastSequence(), e.lifecycleNumber(), digest);
        return new Validated(e, input, claim);
    }

    /**
     * {@link #validate} plus: the payload is a valid canonical snapshot of the envelope's format
     * (another version is E-PAYLOAD with P-VERSION) that agrees.
     */
    public static Strict validateStrict(Envelope e) throws EnvelopeRejectedException {
        return validateStrict(e, ALL);
    }

    /** {@link #validateStrict(Envelope)} accepting the formats in {@code accepted} only. */
    public static Strict validateStrict(Envelope e, Set<SnapshotFormat> accepted) throws EnvelopeRejectedException {
        Validated v = validate(e, accepted);
        Snapshot s;
        try {
            s = Snapshot.decode(e.payload(), Set.of(v.claimInput().snapshotFormat()));
        } catch (PayloadRejectedException pe) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_PAYLOAD, pe.rule());
        }
        if (s.lastSequence() != e.lastSequence() || s.status().lifecycleNumber() != e.lifecycleNumber()
                || !s.runId().equals(e.runId())) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_AGREEMENT);
        }
        return new Strict(v, s);
    }

    /**
     * Keyed verification of a structurally valid envelope (c.3). Returns nothing on success.
     *
     * @throws VerificationException for every failure, including a verifier that throws
     */
    public static void verify(Validated v, Verifier verifier) throws VerificationException {
        if (verifier == null || v == null) {
            throw VerificationException.failed();
        }
        try {
            verifier.verify(v.claimInput(), v.claim());
        } catch (VerificationException | CancellationException ex) {
            throw ex;
        } catch (RuntimeException | Error ex) {
            // a.4 step 7: a verifier's error or panic becomes the single verification failure;
            // only the VM's own (out of memory, stack overflow) is not the verifier's answer.
            if (ex instanceof VirtualMachineError vme) {
                throw vme;
            }
            throw VerificationException.failed();
        }
    }

    /**
     * E-PAYLOAD-JSON: the reference's lenient decode of {@code {"run_id": string}} (Go
     * {@code json.Unmarshal}): one JSON value plus white space; unknown members ignored; names
     * matched case-insensitively; the later duplicate wins; a top-level {@code null} gives "";
     * a non-object top level or a non-string, non-null run_id is an error.
     */
    static String lenientRunId(byte[] payload) throws EnvelopeRejectedException {
        try {
            GoJsonReader r = new GoJsonReader(payload);
            String runId = "";
            boolean typeError = false;
            int kind = r.peekKind();
            if (kind == 'n') {
                r.readNull();
            } else if (kind == '{') {
                r.beginObject();
                String key;
                boolean first = true;
                while ((key = r.nextMember(first)) != null) {
                    first = false;
                    if (GoFieldNames.match(key, RUN_ID_FIELD) == 0) {
                        int vk = r.peekKind();
                        if (vk == '"') {
                            runId = r.readString();
                        } else if (vk == 'n') {
                            r.readNull();
                        } else {
                            typeError = true;
                            r.skipValue();
                        }
                    } else {
                        r.skipValue();
                    }
                }
            } else {
                r.skipValue();
                typeError = true;
            }
            r.skipWhitespace();
            if (!r.atEnd() || typeError) {
                throw new EnvelopeRejectedException(EnvelopeRule.E_PAYLOAD_JSON);
            }
            return runId;
        } catch (JsonSyntaxException ex) {
            throw new EnvelopeRejectedException(EnvelopeRule.E_PAYLOAD_JSON);
        }
    }
}
