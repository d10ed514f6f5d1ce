package spice.authority.app.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import spice.authority.core.AuthorityException;
import spice.authority.snapshot.contract.ProblemCode;

/** RFC 9457 problem bodies with the stable codes of ARCHITECTURE.md. */
public final class Problems {
    public static final String MEDIA_TYPE = "application/problem+json";
    private static final JsonFactory JSON = new JsonFactory();

    private Problems() {}

    /** HTTP status for an authority failure class. */
    public static int status(AuthorityException e) {
        return switch (e) {
            case AuthorityException.Configuration c -> 400;
            case AuthorityException.Verification v -> 403;
            // RFC 9110 15.5.16: content in a format the target does not support, found by
            // inspecting the data itself; nothing was written.
            case AuthorityException.UnsupportedFormat f -> 415;
            case AuthorityException.Busy b -> 409;
            case AuthorityException.State s -> 409;
            case AuthorityException.Uncertain u -> 500;
            case AuthorityException.Unavailable u -> 503;
            case AuthorityException.Closed c -> 503;
            case AuthorityException.Cancelled c -> 503;
        };
    }

    /** The problem body. Verification failures always produce the identical bytes. */
    public static String body(int status, ProblemCode code, String detail, String rule) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("type", "urn:spice-authority:problem:" + code.wire());
            g.writeStringField("title", code.title());
            g.writeNumberField("status", status);
            g.writeStringField("code", code.wire());
            g.writeStringField("detail", detail);
            if (rule != null) {
                g.writeStringField("rule", rule);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }
}
