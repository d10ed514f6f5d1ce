package spice.authority.app.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import spice.authority.app.command.ExitCodes;
import spice.authority.host.AuthorityClient;
import spice.authority.host.AuthorityView;
import spice.authority.host.WithJson;
import spice.authority.snapshot.contract.RunPhase;

@Command(name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Show the running helper's state; never shows secrets.",
            "Asks the helper for its endpoint, authority state, scope ID, key generation,",
            "open sessions, owned runs, import transactions, leases, and runs counted by",
            "phase. Talks to the helper; opens no listener."
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
    static final List<String> PHASES = java.util.Arrays.stream(RunPhase.values()).map(Enum::name).toList();

    @Override
    int run(AuthorityClient client) throws IOException, Refused {
        WithJson<AuthorityView> answer = client.authorityWithJson();
        if (json) {
            printJson(client, answer.json());
            return ExitCodes.OK;
        }
        AuthorityView a = answer.value();
        Map<String, String> lines = new LinkedHashMap<>();
        lines.put("endpoint", a.endpoint() != null ? clean(a.endpoint()) : client.endpoint().display());
        lines.put("state", clean(a.state()));
        lines.put("scope ID", clean(a.scopeId()));
        lines.put("key generation", Long.toUnsignedString(a.keyGeneration()));
        if (a.directory() != null) {
            lines.put("directory", clean(a.directory()));
        }
        lines.put("sessions", Long.toUnsignedString(a.sessions()));
        lines.put("owned runs", Long.toUnsignedString(a.ownedRuns()));
        lines.put("imports", Long.toUnsignedString(a.imports()));
        lines.put("leases", Long.toUnsignedString(a.leases()));
        lines.put("runs", phases(a.runsByPhase()));
        if (a.unreadableRecords() != 0) {
            lines.put("unreadable", Long.toUnsignedString(a.unreadableRecords())
                    + " run records could not be verified (see the helper's log)");
        }
        int width = lines.keySet().stream().mapToInt(String::length).max().orElse(0);
        PrintWriter out = spec.commandLine().getOut();
        for (Map.Entry<String, String> e : lines.entrySet()) {
            out.println(e.getKey() + " ".repeat(width - e.getKey().length() + 2) + e.getValue());
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** {@code 4 (ACTIVE 1, SUSPENDED 3)}, or {@code 0}. */
    static String phases(Map<String, Long> m) {
        if (m.isEmpty()) {
            return "0";
        }
        List<String> parts = new ArrayList<>();
        long total = 0;
        for (String p : PHASES) {
            if (m.get(p) instanceof Long n) {
                parts.add(p + " " + Long.toUnsignedString(n));
                total += n;
            }
        }
        for (Map.Entry<String, Long> e : m.entrySet()) {
            if (!PHASES.contains(e.getKey())) {
                parts.add(clean(e.getKey()) + " " + Long.toUnsignedString(e.getValue()));
                total += e.getValue();
            }
        }
        return total + " (" + String.join(", ", parts) + ")";
    }
}
