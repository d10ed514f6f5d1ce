package spice.authority.app.view;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * JSON text of a tree of maps, lists, strings, numbers and booleans (the views of this package),
 * for the CLI's output and the API's answers alike.
 */
public final class JsonTree {
    private static final JsonFactory FACTORY = new JsonFactory();

    private JsonTree() {}

    /** Writes a node that is not part of a tree (the API's response records). */
    @FunctionalInterface
    public interface Other {
        void write(JsonGenerator g, Object node) throws IOException;
    }

    /** The tree, indented. */
    public static String pretty(Object tree) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(w)) {
            g.useDefaultPrettyPrinter();
            write(g, tree, JsonTree::unknown);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    /** Writes {@code node} and everything below it; nodes that are not part of a tree go to {@code other}. */
    public static void write(JsonGenerator g, Object node, Other other) throws IOException {
        switch (node) {
            case null -> g.writeNull();
            case String s -> g.writeString(s);
            case Boolean b -> g.writeBoolean(b);
            case Integer i -> g.writeNumber(i);
            case Long l -> g.writeNumber(l);
            case BigInteger b -> g.writeNumber(b);
            case Map<?, ?> m -> {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    g.writeFieldName(String.valueOf(e.getKey()));
                    write(g, e.getValue(), other);
                }
                g.writeEndObject();
            }
            case List<?> l -> {
                g.writeStartArray();
                for (Object o : l) {
                    write(g, o, other);
                }
                g.writeEndArray();
            }
            default -> other.write(g, node);
        }
    }

    private static void unknown(JsonGenerator g, Object node) {
        throw new IllegalArgumentException("no JSON form for " + node.getClass().getName());
    }
}
