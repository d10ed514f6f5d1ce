package spice.authority.app.install;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Linker;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The native profile's reachability metadata is well-formed and names what exists. */
class NativeImageMetadataTest {
    private static final String RESOURCE = "/META-INF/native-image/spice.authority/spice-authority-app/reachability-metadata.json";

    private static JsonNode metadata() throws IOException {
        try (InputStream in = NativeImageMetadataTest.class.getResourceAsStream(RESOURCE)) {
            assertThat(in).as(RESOURCE).isNotNull();
            return new ObjectMapper().readTree(in);
        }
    }

    @Test
    void resources_includeTheOpenApiDocuments_andEachGlobNamesAResourceThatExists() throws IOException {
        List<String> globs = new ArrayList<>();
        metadata().get("resources").forEach(r -> globs.add(r.get("glob").asText()));
        // Without them a native helper would not start: api/Metrics reads the JSON document at start-up.
        assertThat(globs).contains("META-INF/spice-authority/openapi.json", "META-INF/spice-authority/openapi.yaml");
        for (String glob : globs) {
            assertThat(getClass().getClassLoader().getResource(glob)).as(glob).isNotNull();
        }
    }

    @Test
    void reflectionTypes_allExist() throws IOException {
        List<String> missing = new ArrayList<>();
        for (JsonNode r : metadata().get("reflection")) {
            try {
                Class.forName(r.get("type").asText(), false, getClass().getClassLoader());
            } catch (ClassNotFoundException e) {
                missing.add(r.get("type").asText());
            }
        }
        assertThat(missing).isEmpty();
    }

    @Test
    void downcalls_useCanonicalLayoutsAndKnownOptions() throws IOException {
        Set<String> canonical = Linker.nativeLinker().canonicalLayouts().keySet();
        List<String> problems = new ArrayList<>();
        JsonNode downcalls = metadata().get("foreign").get("downcalls");
        assertThat(downcalls.size()).isGreaterThanOrEqualTo(12);
        for (JsonNode d : downcalls) {
            if (!canonical.contains(d.get("returnType").asText())) {
                problems.add("return " + d.get("returnType"));
            }
            d.get("parameterTypes").forEach(p -> {
                if (!canonical.contains(p.asText())) {
                    problems.add("parameter " + p);
                }
            });
            if (d.has("options")) {
                d.get("options").fieldNames().forEachRemaining(o -> {
                    if (!Set.of("captureCallState", "firstVariadicArg").contains(o)) {
                        problems.add("option " + o);
                    }
                });
            }
        }
        assertThat(problems).isEmpty();
    }
}
