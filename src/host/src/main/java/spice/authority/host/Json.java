package spice.authority.host;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.JsonSyntaxException;

/**
 * The helper's JSON answers read with the snapshot module's reader into a small tree:
 * {@link Map} (member order kept), {@link List}, {@link String}, {@link Long} (an unsigned 64-bit
 * integer: the API sends no other numbers), {@link Boolean} and {@code null}. A body that is not
 * exactly one such value is {@link Malformed}; the reason is not kept (it could quote the body).
 */
final class Json {
    private static final int MAX_DEPTH = 64;

    private Json() {}

    /** Not the JSON this client expects. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed() {
            super("malformed JSON", null, false, false);
        }
    }

    static Object parse(byte[] body) throws Malformed {
        try {
            GoJsonReader r = new GoJsonReader(body);
            Object v = value(r);
            if (!r.atEnd()) {
                r.skipWhitespace();
                if (!r.atEnd()) {
                    throw new Malformed();
                }
            }
            return v;
        } catch (JsonSyntaxException e) {
            throw new Malformed();
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(byte[] body) throws Malformed {
        if (parse(body) instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new Malformed();
    }

    private static Object value(GoJsonReader r) throws Malformed {
        if (r.depth() > MAX_DEPTH) {
            throw new Malformed();
        }
        switch (r.peekKind()) {
            case '{' -> {
                r.beginObject();
                Map<String, Object> m = new LinkedHashMap<>();
                boolean first = true;
                for (String name; (name = r.nextMember(first)) != null; first = false) {
                    // SECURITY: a repeated member is refused, never "last one wins".
                    if (m.containsKey(name)) {
                        throw new Malformed();
                    }
                    m.put(name, value(r));
                }
                return Collections.unmodifiableMap(m);
            }
            case '[' -> {
                r.beginArray();
                List<Object> l = new ArrayList<>();
                for (boolean first = true; r.nextElement(first); first = false) {
                    l.add(value(r));
                }
                return Collections.unmodifiableList(l);
            }
            case '"' -> {
                return r.readString();
            }
            case 'n' -> {
                r.readNull();
                return null;
            }
            case 't', 'f' -> {
                return r.readBoolean();
            }
            case '0' -> {
                long v = r.readNumberAsUnsigned();
                if (!r.lastNumberWasUnsigned()) {
                    throw new Malformed();
                }
                return v;
            }
            default -> throw new Malformed();
        }
    }
}
