package spice.authority.snapshot.payload;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;

/**
 * Property (issue 2): non-canonical renderings of every valid corpus file and of every fifth
 * transcript are never accepted. Each variant below keeps the decoded value (only the bytes
 * differ), so the only rule that may reject it is P-CANONICAL. Byte-identical re-encoding of the
 * originals is covered by PayloadCorpusTest.
 */
class PayloadPropertyTest {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true));

    /** Valid corpus files and every fifth transcript, by name, as canonical text. */
    private static Map<String, String> inputs() throws Exception {
        Map<String, String> in = new LinkedHashMap<>();
        for (JsonNode c : SpecFiles.json("payload-corpus/public/index.json").get("cases")) {
            if (c.get("expected").asText().equals("valid")) {
                String f = c.get("file").asText();
                in.put(f, new String(SpecFiles.bytes("payload-corpus/public/" + f), UTF_8));
            }
        }
        List<Path> transcripts;
        try (Stream<Path> s = Files.list(SpecFiles.resolve("transcripts"))) {
            transcripts = s.filter(p -> p.getFileName().toString().startsWith("tau-")).sorted().toList();
        }
        for (int i = 0; i < transcripts.size(); i += 5) {
            Path p = transcripts.get(i);
            in.put(p.getFileName().toString(), Files.readString(p, UTF_8));
        }
        return in;
    }

    private static String swap(String s, int aStart, int aEnd, int bEnd) {
        // [aStart,aEnd) and [aEnd,bEnd) are adjacent spans; returns them swapped.
        return s.substring(0, aStart) + s.substring(aEnd, bEnd) + s.substring(aStart, aEnd) + s.substring(bEnd);
    }

    private static int once(String s, String needle) {
        int at = s.indexOf(needle);
        if (at < 0) {
            throw new IllegalArgumentException("missing " + needle);
        }
        return at;
    }

    /** Index just after the JSON string starting with the quote at {@code quote}. */
    private static int endOfString(String s, int quote) {
        if (s.charAt(quote) != '"') {
            throw new IllegalArgumentException("no string at " + quote);
        }
        for (int i = quote + 1; ; i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                return i + 1;
            }
        }
    }

    private static String replaceAt(String s, int at, String from, String to) {
        if (!s.startsWith(from, at)) {
            throw new IllegalArgumentException("no " + from + " at " + at);
        }
        return s.substring(0, at) + to + s.substring(at + from.length());
    }

    /** Value-preserving, non-canonical renderings of a canonical payload. */
    static Map<String, UnaryOperator<String>> variants() {
        Map<String, UnaryOperator<String>> v = new LinkedHashMap<>();
        v.put("pretty-printed (Jackson)", s -> {
            try {
                return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(JSON.readTree(s));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        v.put("members reversed at every level (Jackson, compact)", s -> {
            try {
                return JSON.writeValueAsString(reversed(JSON.readTree(s)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        v.put("version and run_id swapped", s -> {
            int start = once(s, "\"version\":");
            int runId = once(s, ",\"run_id\":");
            int def = once(s, ",\"definition\":{");
            // {"version":V,"run_id":R,... -> {"run_id":R,"version":V,...
            String version = s.substring(start, runId);
            String run = s.substring(runId + 1, def);
            return s.substring(0, start) + run + "," + version + s.substring(def);
        });
        v.put("last_sequence and status swapped", s -> {
            int seq = s.lastIndexOf(",\"last_sequence\":");
            int status = s.lastIndexOf(",\"status\":");
            return swap(s, seq, status, s.length() - 1);
        });
        v.put("kind and its next member swapped in the first part", s -> {
            // {"kind":K,"text":T} or {"kind":K,"name":N,...}: both values are strings.
            int kind = once(s, "{\"kind\":") + 1;
            int kindEnd = endOfString(s, kind + "\"kind\":".length());
            int nextName = kindEnd + 1; // after the comma
            int nextEnd = endOfString(s, s.indexOf(':', endOfString(s, nextName)) + 1);
            return s.substring(0, kind) + s.substring(nextName, nextEnd) + "," + s.substring(kind, kindEnd) + s.substring(nextEnd);
        });
        v.put("slash escaped in version", s -> s.replaceFirst("snapshot/v1alpha2", "snapshot\\\\/v1alpha2"));
        v.put("ASCII letter escaped in version", s -> s.replaceFirst("\"spice\\.agent", "\"\\\\u0073pice.agent"));
        v.put("run_id name upper-cased", s -> replaceAt(s, once(s, "\"run_id\":"), "\"run_id\":", "\"RUN_ID\":"));
        v.put("status name with long s U+017F", s -> replaceAt(s, s.lastIndexOf("\"status\":"), "\"status\":", "\"\u017Ftatus\":"));
        v.put("max_turns name mixed case", s -> replaceAt(s, once(s, "\"max_turns\":"), "\"max_turns\":", "\"Max_Turns\":"));
        v.put("first kind name with Kelvin sign", s -> replaceAt(s, once(s, "{\"kind\":") + 1, "\"kind\":", "\"\u212Aind\":"));
        v.put("fingerprint name upper-cased", s -> replaceAt(s, s.lastIndexOf("\"fingerprint\":"), "\"fingerprint\":", "\"FINGERPRINT\":"));
        v.put("last_sequence duplicated", s -> {
            int seq = s.lastIndexOf(",\"last_sequence\":");
            int status = s.lastIndexOf(",\"status\":");
            return s.substring(0, status) + s.substring(seq, status) + s.substring(status);
        });
        v.put("status duplicated with another value first", s -> {
            int status = s.lastIndexOf(",\"status\":");
            return s.substring(0, status) + ",\"status\":\"running\"" + s.substring(status);
        });
        v.put("definition duplicated", s -> {
            int def = once(s, ",\"definition\":{");
            int turns = once(s, ",\"completed_turns\":");
            return s.substring(0, turns) + s.substring(def, turns) + s.substring(turns);
        });
        v.put("history duplicated", s -> {
            int h = once(s, ",\"history\":[");
            int plan = s.lastIndexOf(",\"plan_identity\":{\"compiled_identities\":");
            return s.substring(0, plan) + s.substring(h, plan) + s.substring(plan);
        });
        v.put("plan_identity duplicated", s -> {
            int plan = s.lastIndexOf(",\"plan_identity\":{\"compiled_identities\":");
            int ia = s.lastIndexOf(",\"seen_interaction_ids\":");
            return s.substring(0, ia) + s.substring(plan, ia) + s.substring(ia);
        });
        v.put("seen_interaction_ids duplicated", s -> {
            int ia = s.lastIndexOf(",\"seen_interaction_ids\":");
            int seq = s.lastIndexOf(",\"last_sequence\":");
            return s.substring(0, seq) + s.substring(ia, seq) + s.substring(seq);
        });
        v.put("leading space", s -> " " + s);
        v.put("trailing newline", s -> s + "\n");
        v.put("space after first colon", s -> s.replaceFirst("\"version\":", "\"version\": "));
        return v;
    }

    private static JsonNode reversed(JsonNode n) {
        if (n.isObject()) {
            ObjectNode out = JSON.getNodeFactory().objectNode();
            List<Map.Entry<String, JsonNode>> fields = new ArrayList<>(n.properties());
            for (int i = fields.size() - 1; i >= 0; i--) {
                out.set(fields.get(i).getKey(), reversed(fields.get(i).getValue()));
            }
            return out;
        }
        if (n.isArray()) {
            ArrayNode out = JSON.getNodeFactory().arrayNode();
            n.forEach(e -> out.add(reversed(e)));
            return out;
        }
        return n;
    }

    @Test
    void nonCanonicalVariants_ofEveryValidFileAndTranscript_rejectedAsNonCanonical() throws Exception {
        Map<String, String> inputs = inputs();
        assertThat(inputs).hasSizeGreaterThanOrEqualTo(25);
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (Map.Entry<String, String> in : inputs.entrySet()) {
            String original = in.getValue();
            if (!PayloadFixtures.verdict(original).equals(PayloadFixtures.OK)) {
                failures.add(in.getKey() + ": original not accepted");
                continue;
            }
            for (Map.Entry<String, UnaryOperator<String>> v : variants().entrySet()) {
                String variant = v.getValue().apply(original);
                if (variant.equals(original)) {
                    failures.add(in.getKey() + " / " + v.getKey() + ": variant generator produced the original");
                    continue;
                }
                checked++;
                String got = PayloadFixtures.verdict(variant);
                if (!got.equals("P-CANONICAL")) {
                    failures.add(in.getKey() + " / " + v.getKey() + ": " + got);
                }
            }
        }
        assertThat(failures).isEmpty();
        assertThat(checked).isGreaterThanOrEqualTo(25 * 20);
    }

    @Test
    void variants_neverAccepted_evenWhenCombined() throws Exception {
        // Two value-preserving changes at once: still P-CANONICAL, never accepted.
        List<String> failures = new ArrayList<>();
        List<UnaryOperator<String>> ops = new ArrayList<>(variants().values());
        for (Map.Entry<String, String> in : inputs().entrySet()) {
            for (int i = 2; i < ops.size(); i++) {
                UnaryOperator<String> a = ops.get(i);
                UnaryOperator<String> b = ops.get((i * 7) % ops.size());
                if (a == b) {
                    continue;
                }
                String got;
                try {
                    got = PayloadFixtures.verdict(b.apply(a.apply(in.getValue())));
                } catch (RuntimeException e) {
                    continue; // the second generator could not find its anchor in the first's output
                }
                if (got.equals(PayloadFixtures.OK)) {
                    failures.add(in.getKey() + " / combination " + i + ": accepted");
                }
            }
        }
        assertThat(failures).isEmpty();
    }
}
