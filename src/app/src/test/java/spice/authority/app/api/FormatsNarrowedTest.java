package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import spice.authority.core.RunAuthority;
import spice.authority.snapshot.SpecFiles;

/**
 * A helper whose format policy is narrowed by configuration ({@code spice.authority.formats=v1alpha2})
 * refuses v1alpha3 by name ({@code 415 unsupported_format}), payloads and envelopes alike, and
 * writes nothing; v1alpha2 goes on as before.
 */
@QuarkusTest
@TestProfile(FormatsNarrowedTest.V1alpha2Only.class)
class FormatsNarrowedTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String V3 = "spice.agent.snapshot/v1alpha3";

    /** The test configuration: v1alpha2 only. */
    public static final class V1alpha2Only implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("spice.authority.formats", "v1alpha2");
        }
    }

    @Inject
    io.quarkus.vertx.http.HttpServer server;

    @Inject
    RunAuthority authority;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<byte[]> send(String method, String path, String session, String type, byte[] body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getPort() + path))
                .header("Authorization", "Bearer " + TestServeBeans.TOKEN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (session != null) {
            b.header("Spice-Session", session);
        }
        if (type != null) {
            b.header("Content-Type", type);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static JsonNode json(HttpResponse<byte[]> r) throws Exception {
        return JSON.readTree(r.body());
    }

    private String session() throws Exception {
        HttpResponse<byte[]> r = send("POST", "/v1/sessions", null, "application/json",
                ("{\"pid\": " + ProcessHandle.current().pid() + "}").getBytes(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).isEqualTo(200);
        return json(r).path("session").asText();
    }

    private Map<String, String> directory() throws Exception {
        try (Stream<Path> files = Files.list(Path.of(authority.directory()))) {
            return files.collect(java.util.stream.Collectors.toMap(p -> p.getFileName().toString(), p -> {
                try {
                    return java.util.HexFormat.of().formatHex(Files.readAllBytes(p));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }));
        }
    }

    private static void assertUnsupportedNaming(HttpResponse<byte[]> r, String format) throws Exception {
        String text = new String(r.body(), StandardCharsets.UTF_8);
        assertThat(r.statusCode()).as(text).isEqualTo(415);
        JsonNode p = json(r);
        assertThat(p.path("code").asText()).isEqualTo("unsupported_format");
        assertThat(p.path("type").asText()).isEqualTo("urn:spice-authority:problem:unsupported_format");
        assertThat(p.path("detail").asText()).contains(format);
    }

    @Test
    void v1alpha3Envelope_isUnsupportedFormatNamingIt_andNothingIsWritten() throws Exception {
        String s = session();
        byte[] env = SpecFiles.hex(SpecFiles.json("vectors-v1alpha3/envelope.json").get("cases").get(0).get("envelope_hex").asText());
        Map<String, String> before = directory();
        assertUnsupportedNaming(send("POST", "/v1/imports", s, Bodies.PROTOBUF, env), V3);
        assertThat(directory()).isEqualTo(before);
    }

    @Test
    void v1alpha3Payload_isUnsupportedFormatNamingIt_andNothingIsWritten_v1alpha2StillSigns() throws Exception {
        String s = session();
        byte[] v3 = SpecFiles.bytes("payload-corpus/v1alpha3/valid-01-minimal-suspended.json");
        String run = "run-" + Long.toHexString(System.nanoTime());
        byte[] payload = new String(v3, StandardCharsets.UTF_8).replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + run + "\"")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(send("POST", "/v1/runs", s, "application/json", ("{\"run_id\": \"" + run + "\"}").getBytes(StandardCharsets.UTF_8))
                .statusCode()).isEqualTo(200);
        Map<String, String> before = directory();
        HttpResponse<byte[]> r = send("POST", "/v1/runs/" + run + "/snapshots", s, Bodies.PAYLOAD_V1ALPHA3, payload);
        assertUnsupportedNaming(r, V3);
        assertThat(json(r).path("rule").asText()).isEqualTo("P-VERSION");
        assertThat(directory()).isEqualTo(before);

        byte[] v2 = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8)
                .replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + run + "\"").getBytes(StandardCharsets.UTF_8);
        assertThat(send("POST", "/v1/runs/" + run + "/snapshots", s, Bodies.PAYLOAD, v2).statusCode()).isEqualTo(200);
    }

    @Test
    void authorityView_listsOnlyTheFormatsTaken() throws Exception {
        JsonNode v = json(send("GET", "/v1/authority", null, null, null));
        for (String use : List.of("signing", "verification", "import")) {
            assertThat(v.path("formats").path(use).toString()).isEqualTo("[\"spice.agent.snapshot/v1alpha2\"]");
        }
    }
}
