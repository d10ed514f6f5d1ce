package spice.authority.app.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperProblem;
import spice.authority.host.HelperTransportException;
import spice.authority.host.ImportView;
import spice.authority.host.RetryPolicy;
import spice.authority.host.RunView;
import spice.authority.host.Session;

/**
 * The Java side of the conformance kit ({@code spec-kit/conformance/README.md}): one host process's
 * calls, every one made through {@link AuthorityClient} with retries off (a scenario sees the
 * helper's first answer). {@link ConformanceIT} uses it in its own process; a scenario's other
 * host processes ({@code spawn_host}) run {@link #main} ("agent mode": one resolved step as a JSON
 * line on standard input, its outcome as a JSON line on standard output, until end of input).
 *
 * <p>An outcome is {@code {"status", "code"?, "rule"?, "json"?, "envelope"? (base64), "error"?}}.
 * {@link AuthorityClient} answers a success with its value, not its status: the status of a
 * success is the one the API documents for the operation (204 for close_session, release and
 * abort_import, 200 otherwise). A refusal's status, code and rule are the {@link HelperProblem}'s.
 */
final class ConformanceHost {
    static final ObjectMapper JSON = new ObjectMapper();

    private final AuthorityClient client;
    private final Map<String, Session> sessions = new LinkedHashMap<>();

    ConformanceHost(Path socket) {
        this.client = AuthorityClient.builder(new HelperEndpoint.Unix(socket)).retry(RetryPolicy.NONE).build();
    }

    AuthorityClient client() {
        return client;
    }

    /** Runs one resolved step (run IDs, payload and envelope bytes already in it). */
    ObjectNode execute(JsonNode step) {
        ObjectNode out = JSON.createObjectNode();
        String op = step.path("do").asText();
        try {
            Object value = call(op, step);
            out.put("status", op.equals("close_session") || op.equals("release") || op.equals("abort_import") ? 204 : 200);
            if (value instanceof byte[] envelope) {
                out.put("envelope", Base64.getEncoder().encodeToString(envelope));
            } else if (value instanceof JsonNode json) {
                out.set("json", json);
            }
        } catch (HelperProblem p) {
            out.put("status", p.status());
            out.put("code", p.code());
            if (p instanceof HelperProblem.InvalidSnapshot s && s.rule() != null) {
                out.put("rule", s.rule());
            }
        } catch (HelperTransportException | IllegalArgumentException e) {
            out.put("status", 0);
            out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        } catch (IOException e) {
            out.put("status", 0);
            out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return out;
    }

    private Session session(JsonNode step) {
        Session s = sessions.get(step.path("session").asText());
        if (s == null) {
            throw new IllegalArgumentException("no session " + step.path("session").asText() + " in this host");
        }
        return s;
    }

    private Object call(String op, JsonNode s) throws IOException {
        String run = s.path("run_id").asText();
        return switch (op) {
            case "open_session" -> {
                sessions.put(s.path("session").asText(), client.openSession());
                yield null;
            }
            case "close_session" -> {
                client.closeSession(session(s));
                yield null;
            }
            case "authority" -> JSON.readTree(client.authorityWithJson().json().bytes());
            case "start" -> view(client.start(session(s), run));
            case "sign" -> client.sign(session(s), run, Base64.getDecoder().decode(s.path("payload").asText()));
            case "resume" -> view(client.resume(session(s), run));
            case "release" -> {
                client.release(session(s), run);
                yield null;
            }
            case "get_run" -> JSON.readTree(client.runWithJson(run).json().bytes());
            case "list_runs" -> JSON.readTree(client.runsWithJson().json().bytes());
            case "abandon" -> JSON.readTree(client.abandonWithJson(session(s), run).json().bytes());
            case "prepare_import" -> view(client.prepareImport(session(s), Base64.getDecoder().decode(s.path("envelope").asText())));
            case "consume" -> view(client.consume(session(s), importView(s.path("import"))));
            case "activate" -> view(client.activate(session(s), importView(s.path("import"))));
            case "abort_import" -> {
                client.abortImport(session(s), importView(s.path("import")));
                yield null;
            }
            case "inspect" -> JSON.readTree(client.inspect(Base64.getDecoder().decode(s.path("envelope").asText())).bytes());
            default -> throw new IllegalArgumentException("unknown step " + op);
        };
    }

    /** A run view as the helper's document names it ({@code fenced} only when true, as the helper writes it). */
    static ObjectNode view(RunView v) {
        ObjectNode o = JSON.createObjectNode();
        o.put("run_id", v.runId());
        o.put("phase", v.phase().name());
        o.put("run_generation", v.runGeneration());
        o.put("owned", v.owned());
        if (v.fenced()) {
            o.put("fenced", true);
        }
        return o;
    }

    static ObjectNode view(ImportView v) {
        ObjectNode o = JSON.createObjectNode();
        o.put("import", v.importId());
        o.put("run_id", v.runId());
        o.put("last_sequence", v.lastSequence());
        o.put("next_sequence", v.nextSequence());
        return o;
    }

    static ImportView importView(JsonNode o) {
        return new ImportView(o.path("import").asText(), o.path("run_id").asText(), o.path("last_sequence").asLong(),
                o.path("next_sequence").asLong());
    }

    /** Closes every session this host still has open (end of a scenario). */
    void closeAll() {
        for (Session s : sessions.values()) {
            try {
                client.closeSession(s);
            } catch (IOException ignored) {
                // already closed by the scenario, or the helper is gone: nothing left to close
            }
        }
        sessions.clear();
    }

    /** Agent mode: {@code ConformanceHost SOCKET}. */
    public static void main(String[] args) throws IOException {
        ConformanceHost host = new ConformanceHost(Path.of(args[0]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode step = JSON.readTree(line);
            ObjectNode out;
            if (step.path("do").asText().equals("close_all")) {
                host.closeAll();
                out = JSON.createObjectNode().put("status", 0);
            } else {
                out = host.execute(step);
            }
            System.out.println(JSON.writeValueAsString(out));
            System.out.flush();
        }
    }
}
