package spice.authority.app.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamWriteFeature;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import spice.authority.app.view.JsonTree;
import spice.authority.snapshot.contract.ProblemCode;

/**
 * The control API's small JSON bodies, on jackson-core's streaming parser and generator only (no
 * data binding: nothing is instantiated from a body by reflection, and the helper does not load
 * jackson-databind's several hundred classes on start).
 *
 * <p>Requests are strict: well-formed UTF-8 without a byte order mark, one object, only the named
 * members, each at most once and of its type (or null, which counts as absent), nothing after it.
 */
public final class Json {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .disable(StreamWriteFeature.AUTO_CLOSE_TARGET)
            .build();

    private Json() {}

    /** A member's expected JSON type. */
    public enum Kind { STRING, INTEGER }

    /**
     * The members of a request object ({@code null} for an empty body): a map from the names in
     * {@code members} that are present and not null to their values (String, or Long for INTEGER);
     * bodies above {@code maxBytes} are refused (413).
     *
     * @throws ApiException invalid_request naming what is wrong (never echoing the body)
     */
    public static Map<String, Object> readObject(byte[] body, int maxBytes, String what, Map<String, Kind> members) {
        if (body == null || body.length == 0) {
            return null;
        }
        // Content-Length was checked before the body was read (TransportGuard); this bounds a body
        // sent without one (chunked), by the same setting.
        if (body.length > maxBytes) {
            throw new ApiException(413, ProblemCode.INVALID_REQUEST, "control body larger than " + maxBytes
                    + " bytes (spice.authority.max-control-body)");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw ApiException.invalidRequest("malformed JSON body (not UTF-8)");
        }
        if (text.startsWith("\uFEFF")) {
            throw ApiException.invalidRequest("malformed JSON body (byte order mark)");
        }
        Map<String, Object> values = new HashMap<>();
        try (JsonParser p = FACTORY.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw ApiException.invalidRequest("malformed JSON body (expected a " + what + " object)");
            }
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String name = p.currentName();
                Kind kind = members.get(name);
                if (kind == null) {
                    throw ApiException.invalidRequest("unknown member in " + what + " (allowed: "
                            + String.join(", ", Set.copyOf(members.keySet()).stream().sorted().toList()) + ")");
                }
                JsonToken v = p.nextToken();
                if (v == JsonToken.VALUE_NULL) {
                    continue;
                }
                switch (kind) {
                    case STRING -> {
                        if (v != JsonToken.VALUE_STRING) {
                            throw ApiException.invalidRequest(what + "." + name + " must be a string");
                        }
                        values.put(name, p.getText());
                    }
                    case INTEGER -> {
                        if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT
                                && p.getNumberType() != JsonParser.NumberType.LONG) {
                            throw ApiException.invalidRequest(what + "." + name + " must be an integer");
                        }
                        values.put(name, p.getLongValue());
                    }
                }
            }
            if (p.nextToken() != null) {
                throw ApiException.invalidRequest("malformed JSON body (data after the " + what + " object)");
            }
        } catch (IOException e) {
            throw ApiException.invalidRequest("malformed JSON body (expected a " + what + " object)");
        }
        return values;
    }

    /**
     * The names of the members of the object that is member {@code member} of the top-level object
     * of {@code json} (for example the {@code paths} of an OpenAPI document), in document order.
     *
     * @throws IllegalArgumentException if {@code json} is not such a document
     */
    public static List<String> memberNames(byte[] json, String member) {
        try (JsonParser p = FACTORY.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (!name.equals(member)) {
                    p.skipChildren();
                    continue;
                }
                if (value != JsonToken.START_OBJECT) {
                    throw new IllegalArgumentException("member " + member + " is not an object");
                }
                List<String> names = new java.util.ArrayList<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    names.add(p.currentName());
                    p.nextToken();
                    p.skipChildren();
                }
                return List.copyOf(names);
            }
            throw new IllegalArgumentException("no member " + member);
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed JSON document", e);
        }
    }

    /** Writes a body compact, UTF-8, into a new array. */
    public static byte[] bytes(Object value) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(128);
        try {
            write(value, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** A response body that writes itself. */
    public interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    /** Writes a body, or a list of bodies as a JSON array, compact, UTF-8; {@code out} stays open. */
    public static void write(Object value, OutputStream out) throws IOException {
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            writeValue(g, value);
        }
        out.flush();
    }

    private static void writeValue(JsonGenerator g, Object v) throws IOException {
        JsonTree.write(g, v, (gen, node) -> {
            if (!(node instanceof Body b)) {
                throw new IllegalArgumentException("no JSON form for " + node.getClass().getName());
            }
            b.write(gen);
        });
    }
}
