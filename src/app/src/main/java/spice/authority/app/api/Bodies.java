package spice.authority.app.api;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import spice.authority.core.AuthorityException;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.contract.ProblemCode;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.json.SafeText;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/** Envelope bodies in and out: binary protobuf, or the protobuf JSON mapping on request. */
public final class Bodies {
    public static final String PROTOBUF = "application/x-protobuf";
    public static final String JSON = "application/json";
    /** The media type of a v1alpha2 payload. */
    public static final String PAYLOAD = "application/vnd.spice.snapshot.v1alpha2+json";
    /** The media type of a v1alpha3 payload. */
    public static final String PAYLOAD_V1ALPHA3 = "application/vnd.spice.snapshot.v1alpha3+json";

    private Bodies() {}

    /** Parses an envelope body according to its content type. */
    public static Envelope envelope(String contentType, byte[] body) throws EnvelopeRejectedException {
        if (contentType != null && contentType.toLowerCase(java.util.Locale.ROOT).startsWith(JSON)) {
            return Envelope.parseJson(new String(body, StandardCharsets.UTF_8));
        }
        return Envelope.parse(body);
    }

    /**
     * The envelope of a request body (prepare an import): empty when the body is not an envelope
     * at all, which the caller answers exactly as any other verification failure.
     */
    static Optional<Envelope> importedEnvelope(String contentType, byte[] body) {
        requireSize(body, Envelope.MAX_ENCODED_BYTES * 2, "envelope");
        try {
            return Optional.of(envelope(contentType, body));
        } catch (EnvelopeRejectedException e) {
            return Optional.empty();
        }
    }

    /** The envelope of a request body to inspect: {@code 400 invalid_request} naming the defect when it is none. */
    static Envelope inspectedEnvelope(String contentType, byte[] body) {
        requireSize(body, Envelope.MAX_ENCODED_BYTES * 2, "envelope");
        try {
            return envelope(contentType, body);
        } catch (EnvelopeRejectedException e) {
            throw ApiException.invalidRequest(e.getMessage());
        }
    }

    /** The payload media type of {@code format}: {@code application/vnd.spice.snapshot.<version>+json}. */
    public static String payloadType(SnapshotFormat format) {
        return "application/vnd.spice.snapshot." + format.version() + "+json";
    }

    /**
     * The payload of a sign, decoded in a format {@code formats} accepts for signing:
     * {@code 415 unsupported_format} naming the version when it names no format or one refused
     * (rule P-VERSION); {@code 422 invalid_snapshot} with the rule it breaks; {@code 400
     * invalid_request} when {@code contentType} is a payload media type of another version than
     * the payload's ({@code application/json}, or none, names no version); or {@code 503 unavailable} when there
     * is not memory enough to decode it now.
     */
    static Snapshot snapshot(byte[] body, String contentType, FormatPolicy formats) throws AuthorityException.Unavailable {
        requireSize(body, Snapshot.MAX_PAYLOAD_BYTES, "payload");
        Snapshot s;
        try {
            s = Snapshot.decode(body, formats.signing());
        } catch (PayloadRejectedException e) {
            if (e.unsupportedVersion().isPresent()) {
                throw new ApiException(415, ProblemCode.UNSUPPORTED_FORMAT, "payload version \"" + e.unsupportedVersion().get()
                        + "\" is not a snapshot format this helper signs (it signs: " + wires(formats.signing())
                        + "); nothing was written", e.rule().id());
            }
            throw new ApiException(422, ProblemCode.INVALID_SNAPSHOT, e.getMessage(), e.rule().id());
        } catch (OutOfMemoryError e) {
            // Before any lease is touched: what decoding allocated is garbage again, and the
            // caller can know that nothing was written (not the uncertain outcome of an Error at large).
            throw new AuthorityException.Unavailable("not enough memory to decode this payload of " + body.length
                    + " bytes now; nothing was written: retry");
        }
        String type = contentType == null ? "" : contentType.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
        if (!type.isEmpty() && !type.equals(JSON) && !type.equals(payloadType(s.format()))) {
            throw ApiException.invalidRequest("media type " + SafeText.bounded(type, 80) + " names another version than the "
                    + "payload's (" + s.format().version() + "): send it as " + payloadType(s.format()) + " or " + JSON);
        }
        return s;
    }

    private static String wires(java.util.Set<SnapshotFormat> formats) {
        java.util.StringJoiner j = new java.util.StringJoiner(", ");
        for (SnapshotFormat f : SnapshotFormat.values()) {
            if (formats.contains(f)) {
                j.add(f.wire());
            }
        }
        return j.length() == 0 ? "none" : j.toString();
    }

    /** A run ID from a request, or {@code 400 invalid_request} naming the one run-ID rule. */
    static RunId runId(String text) {
        return RunId.parse(text).orElseThrow(() -> ApiException.invalidRequest(RunId.RULE));
    }

    /**
     * The run ID of a run path, decoded from the raw segment by {@link PathText} (never the HTTP
     * stack's lenient decoding), then held to the one run-ID rule exactly as a body's.
     */
    static RunId pathRunId(String rawSegment) {
        return runId(PathText.decode(rawSegment));
    }

    /** True when the client asked for the JSON mapping rather than binary protobuf. */
    public static boolean wantsJson(String accept) {
        if (accept == null) {
            return false;
        }
        String a = accept.toLowerCase(java.util.Locale.ROOT);
        return a.contains(JSON) && !a.contains(PROTOBUF);
    }

    public static void requireSize(byte[] body, int max, String what) {
        if (body == null || body.length == 0) {
            throw ApiException.invalidRequest(what + " body is empty");
        }
        if (body.length > max) {
            throw new ApiException(413, ProblemCode.INVALID_REQUEST, what + " body larger than " + max + " bytes");
        }
    }
}
