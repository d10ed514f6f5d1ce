package spice.authority.app.api;

import java.nio.charset.StandardCharsets;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;

/** Envelope bodies in and out: binary protobuf, or the protobuf JSON mapping on request. */
public final class Bodies {
    public static final String PROTOBUF = "application/x-protobuf";
    public static final String JSON = "application/json";
    public static final String PAYLOAD = "application/vnd.spice.snapshot.v1alpha2+json";

    private Bodies() {}

    /** Parses an envelope body according to its content type. */
    public static Envelope envelope(String contentType, byte[] body) throws EnvelopeRejectedException {
        if (contentType != null && contentType.toLowerCase(java.util.Locale.ROOT).startsWith(JSON)) {
            return Envelope.parseJson(new String(body, StandardCharsets.UTF_8));
        }
        return Envelope.parse(body);
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
            throw new ApiException(413, "invalid_request", what + " body larger than " + max + " bytes");
        }
    }
}
