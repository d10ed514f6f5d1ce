package spice.authority.host.demo;

import java.util.LinkedHashMap;
import java.util.Map;

/** One line of the demo's JSON-lines output: a flat object of strings, numbers and booleans. */
public final class JsonLine {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    private JsonLine() {}

    /** A line with the fixed leading members {@code proc}, {@code pid} and {@code event}. */
    public static JsonLine of(String proc, long pid, String event) {
        return new JsonLine().put("proc", proc).put("pid", pid).put("event", event);
    }

    public JsonLine put(String name, Object value) {
        if (value != null) {
            fields.put(name, value);
        }
        return this;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : fields.entrySet()) {
            if (b.length() > 1) {
                b.append(',');
            }
            quote(b, e.getKey());
            b.append(':');
            Object v = e.getValue();
            if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else {
                quote(b, String.valueOf(v));
            }
        }
        return b.append('}').toString();
    }

    static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
