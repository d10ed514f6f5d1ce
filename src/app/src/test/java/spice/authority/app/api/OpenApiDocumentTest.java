package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The build-time OpenAPI document against what the API really writes and serves. */
class OpenApiDocumentTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static JsonNode document() throws Exception {
        return MAPPER.readTree(OpenApiDocument.document(OpenApiDocument.RESOURCE + ".json"));
    }

    private static TreeSet<String> names(Iterator<String> it) {
        TreeSet<String> s = new TreeSet<>();
        it.forEachRemaining(s::add);
        return s;
    }

    private static void sameMembers(JsonNode schemas, String schema, Json.Body body) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Json.write(body, out);
        TreeSet<String> written = names(MAPPER.readTree(out.toByteArray()).fieldNames());
        TreeSet<String> documented = names(schemas.path(schema).path("properties").fieldNames());
        assertThat(documented).as(schema).isEqualTo(written);
    }

    @Test
    void responseSchemasNameTheMembersTheApiWrites() throws Exception {
        JsonNode schemas = document().path("components").path("schemas");
        sameMembers(schemas, "RunView", new Dto.RunView("r", "ACTIVE", BigInteger.ONE, false, true));
        sameMembers(schemas, "ImportView", new Dto.ImportView("i", "r", BigInteger.ONE, BigInteger.TWO));
        sameMembers(schemas, "SessionResponse", new Dto.SessionResponse("s", 1));
        sameMembers(schemas, "AuthorityView", new Dto.AuthorityView("ab", BigInteger.ONE, "ready", "/d", "unix:/s",
                1, 1, 1, 1, Map.of("ACTIVE", 1), 0, Map.of("bad_mac", 0), Map.of("signing", java.util.List.of())));
        assertThat(names(schemas.path("StartRequest").path("properties").fieldNames()))
                .containsExactlyElementsOf(Dto.StartRequest.MEMBERS.keySet());
        assertThat(names(schemas.path("SessionRequest").path("properties").fieldNames()))
                .containsExactlyElementsOf(Dto.SessionRequest.MEMBERS.keySet());
    }

    @Test
    void everyResourceMethodIsDocumentedWithASuccessAnswer_andTheDocumentItselfIsNot() throws Exception {
        JsonNode paths = document().path("paths");
        List<String> missing = new ArrayList<>();
        for (Method m : ResourceClasses.methods().toList()) {
            Path p = m.getAnnotation(Path.class);
            String verb = m.isAnnotationPresent(jakarta.ws.rs.GET.class) ? "get"
                    : m.isAnnotationPresent(jakarta.ws.rs.POST.class) ? "post"
                    : m.isAnnotationPresent(jakarta.ws.rs.DELETE.class) ? "delete" : null;
            if (p == null || verb == null) {
                continue;
            }
            JsonNode op = paths.path("/v1" + p.value()).path(verb);
            boolean ok = names(op.path("responses").fieldNames()).stream().anyMatch(c -> c.startsWith("2"));
            if (!ok) {
                missing.add(verb + " /v1" + p.value());
            }
        }
        assertThat(missing).isEmpty();
        assertThat(paths.has("/q/openapi")).isFalse();
    }

    @Test
    void servesYamlUnlessJsonIsAskedFor_andRefusesOtherFormats() {
        OpenApiDocument r = new OpenApiDocument();
        Response yaml = r.get(null, null);
        assertThat(yaml.getMediaType().toString()).startsWith("application/yaml");
        assertThat(new String((byte[]) yaml.getEntity())).contains("openapi: 3.1.0").contains("run_id");
        assertThat(yaml.getHeaderString("Vary")).isEqualTo("Accept");
        assertThat(r.get("json", null).getMediaType().toString()).startsWith("application/json");
        assertThat(r.get(null, "application/json").getMediaType().toString()).startsWith("application/json");
        assertThat(r.get("YAML", "application/json").getMediaType().toString()).startsWith("application/yaml");
        assertThatThrownBy(() -> r.get("xml", null)).isInstanceOf(ApiException.class).hasMessage("format must be json or yaml");
    }
}
