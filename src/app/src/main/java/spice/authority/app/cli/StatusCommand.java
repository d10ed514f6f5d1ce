package spice.authority.app.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

@Command(name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Ask the running helper for its state: endpoint, authority state, scope ID, key generation,",
            "open sessions, owned runs, import transactions, leases, and runs counted by phase.",
            "Never shows secrets. Talks to the helper; opens no listener."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  the helper answered",
            "  1  no helper is running (the line says how to start one), or the helper refused",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority status",
            "  spice-authority status --json",
            "  spice-authority status --socket /tmp/demo/endpoint/authority.sock",
            "  spice-authority status --listen 127.0.0.1:7878 --token-file /tmp/demo/endpoint/token"
        })
public final class StatusCommand extends HelperCommand {
    /** Phases in lifecycle order; unknown ones follow in the helper's order. */
    static final List<String> PHASES = java.util.Arrays.stream(spice.authority.core.Phase.values()).map(Enum::name).toList();

    @Override
    int run(HelperClient client) throws IOException, Refused {
        HelperClient.Response r = client.get("/v1/authority");
        if (json) {
            printJson(client, expectSuccess(client, r));
            return Cli.OK;
        }
        Map<String, Object> a = expectObject(client, r);
        Map<String, String> lines = new LinkedHashMap<>();
        lines.put("endpoint", a.containsKey("endpoint") ? clean(a.get("endpoint")) : client.endpoint().display());
        put(lines, "state", a.get("state"));
        put(lines, "scope ID", a.get("scope_id"));
        put(lines, "key generation", a.get("key_generation"));
        put(lines, "directory", a.get("directory"));
        put(lines, "sessions", a.get("sessions"));
        put(lines, "owned runs", a.get("owned_runs"));
        put(lines, "imports", a.get("imports"));
        put(lines, "leases", a.get("leases"));
        lines.put("runs", phases(a.get("runs_by_phase")));
        if (a.get("unreadable_records") instanceof Number n && n.longValue() != 0) {
            lines.put("unreadable", n + " run records could not be verified (see the helper's log)");
        }
        int width = lines.keySet().stream().mapToInt(String::length).max().orElse(0);
        PrintWriter out = spec.commandLine().getOut();
        for (Map.Entry<String, String> e : lines.entrySet()) {
            out.println(e.getKey() + " ".repeat(width - e.getKey().length() + 2) + e.getValue());
        }
        out.flush();
        return Cli.OK;
    }

    private static void put(Map<String, String> lines, String label, Object value) {
        if (value != null) {
            lines.put(label, clean(value));
        }
    }

    /** {@code 4 (ACTIVE 1, SUSPENDED 3)}, or {@code 0}. */
    static String phases(Object byPhase) {
        if (!(byPhase instanceof Map<?, ?> m) || m.isEmpty()) {
            return "0";
        }
        List<String> parts = new ArrayList<>();
        long total = 0;
        for (String p : PHASES) {
            if (m.get(p) instanceof Number n) {
                parts.add(p + " " + n);
                total += n.longValue();
            }
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!PHASES.contains(String.valueOf(e.getKey())) && e.getValue() instanceof Number n) {
                parts.add(clean(e.getKey()) + " " + n);
                total += n.longValue();
            }
        }
        return total + " (" + String.join(", ", parts) + ")";
    }
}
