package spice.authority.app.demo;

import java.io.PrintWriter;
import java.util.Map;
import spice.authority.host.RawJson;
import spice.authority.host.demo.JsonLine;

/**
 * The demo's output: JSON lines ({@code --json}: one object per event, nothing else) or a readable
 * timeline with the time since the demo began.
 */
final class Output {
    private final PrintWriter w;
    private final boolean json;
    private final long t0 = System.nanoTime();

    Output(PrintWriter w, boolean json) {
        this.w = w;
        this.json = json;
    }

    /** A narrative line; the timeline only (JSON lines carry events alone). */
    void note(String proc, long pid, String text) {
        if (!json) {
            w.printf("%8s  %-4s %-7s  %s%n", elapsed(), proc, "", text);
            w.flush();
        }
    }

    /** An event line produced by the demo itself. */
    void line(JsonLine line) {
        try {
            relay(RawJson.of(line.toString()).object());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("the demo wrote an unreadable line", e);
        }
    }

    /** An event line, from a host or from the demo. */
    synchronized void relay(Map<String, Object> l) {
        if (json) {
            JsonLine out = JsonLine.of(String.valueOf(l.get("proc")), (Long) l.get("pid"), String.valueOf(l.get("event")));
            for (Map.Entry<String, Object> e : l.entrySet()) {
                if (!e.getKey().equals("proc") && !e.getKey().equals("pid") && !e.getKey().equals("event")) {
                    out.put(e.getKey(), e.getValue());
                }
            }
            w.println(out);
        } else {
            StringBuilder d = new StringBuilder();
            String event = String.valueOf(l.get("event"));
            if (event.startsWith("Recovery") || event.startsWith("Approval")) {
                append(d, l, "run_id", "run ");
            }
            append(d, l, "outcome", "");
            append(d, l, "reason", "");
            append(d, l, "turn", "turn ");
            append(d, l, "seq", "seq ");
            append(d, l, "call_id", "call ");
            append(d, l, "tool", "");
            append(d, l, "signal", "");
            append(d, l, "exit_code", "exit ");
            append(d, l, "code", "code ");
            append(d, l, "phase", "now ");
            append(d, l, "envelope_bytes", "envelope bytes ");
            append(d, l, "kill_to_resume_ms", "kill to resumed run ms ");
            append(d, l, "command", "operator: ");
            append(d, l, "ok", "ok ");
            append(d, l, "resumed", "resumed ");
            append(d, l, "completed", "completed ");
            append(d, l, "reported", "reported ");
            append(d, l, "effects_twice", "effects twice ");
            append(d, l, "failures", "failed: ");
            append(d, l, "detail", "");
            append(d, l, "error", "");
            w.printf("%8s  %-4s %-7s  %-18s %s%n", elapsed(), l.get("proc"), "pid " + l.get("pid"), l.get("event"), d.toString().strip());
        }
        w.flush();
    }

    private static void append(StringBuilder d, Map<String, Object> l, String key, String prefix) {
        Object v = l.get(key);
        if (v != null) {
            if (!d.isEmpty()) {
                d.append(", ");
            }
            d.append(prefix).append(v);
        }
    }

    private String elapsed() {
        return String.format("%.3fs", (System.nanoTime() - t0) / 1e9);
    }
}
