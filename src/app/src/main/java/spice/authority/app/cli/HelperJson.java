package spice.authority.app.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CLI presentation of the helper's JSON answers ({@code --json}): the document pretty-printed as
 * the helper sent it, with the streaming parser only (no data binding, so the CLI starts fast).
 * Reading the answers into values is {@link spice.authority.host.AuthorityClient}'s job.
 */
final class HelperJson {
    private static final JsonFactory JSON = new JsonFactory();
    private static final int MAX_DEPTH = 64;

    private HelperJson() {}

    /** Thrown for a body that is not exactly one JSON value. */
    static final class MalformedException extends IOException {
        private static final long serialVersionUID = 1L;

        MalformedException() {
            super("malformed JSON");
        }
    }

    static Object parse(byte[] body) throws MalformedException {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() == null) {
                throw new MalformedException();
            }
            Object v = value(p, 0);
            if (p.nextToken() != null) {
                throw new MalformedException();
            }
            return v;
        } catch (MalformedException e) {
            throw e;
        } catch (IOException e) {
            throw new MalformedException();
        }
    }

    /** The document re-printed with indentation, numbers and strings exactly as sent. */
    static String pretty(byte[] body) throws MalformedException {
        parse(body); // exactly one value, bounded depth
        StringWriter w = new StringWriter();
        try (JsonParser p = JSON.createParser(body); JsonGenerator g = JSON.createGenerator(w)) {
            g.useDefaultPrettyPrinter();
            p.nextToken();
            g.copyCurrentStructure(p);
        } catch (IOException e) {
            throw new MalformedException();
        }
        return w.toString();
    }

    private static Object value(JsonParser p, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new MalformedException();
        }
        JsonToken t = p.currentToken();
        if (t == null) {
            throw new MalformedException();
        }
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    m.put(name, value(p, depth + 1));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    l.add(value(p, depth + 1));
                }
                return l;
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                return p.getNumberValue();
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> throw new MalformedException();
        }
    }
}
