package spice.authority.app.api;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * {@code GET /q/openapi}: the OpenAPI document of this API, generated from the resource classes'
 * annotations at build time (smallrye-open-api-maven-plugin, phase process-classes) and served as
 * it was generated: YAML, or JSON with {@code ?format=json} or {@code Accept: application/json}.
 *
 * <p>The document is not built at start-up: the Quarkus OpenAPI extension parses, filters and
 * re-serialises it on every start (about 1,000 classes and a sixth of the start-up time of this
 * helper), for a document that never changes after the build.
 */
@Path("/q/openapi")
public class OpenApiDocument {
    static final String RESOURCE = "META-INF/spice-authority/openapi";
    static final String YAML = "application/yaml;charset=UTF-8";
    static final String JSON = "application/json;charset=UTF-8";

    @GET
    @Operation(hidden = true)
    public Response get(@QueryParam("format") String format, @HeaderParam("Accept") String accept) {
        boolean json;
        if (format != null) {
            json = switch (format.toLowerCase(Locale.ROOT)) {
                case "json" -> true;
                case "yaml", "yml" -> false;
                default -> throw ApiException.invalidRequest("format must be json or yaml");
            };
        } else {
            json = accept != null && accept.toLowerCase(Locale.ROOT).contains("application/json");
        }
        return Response.ok(json ? document(JSON_NAME) : document(YAML_NAME), json ? JSON : YAML)
                .header("Vary", "Accept").build();
    }

    private static final String YAML_NAME = RESOURCE + ".yaml";
    private static final String JSON_NAME = RESOURCE + ".json";
    private static final java.util.concurrent.ConcurrentHashMap<String, byte[]> DOCUMENTS =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** The document as built, read once on first use; a build without it is a plain 500 problem. */
    static byte[] document(String name) {
        return DOCUMENTS.computeIfAbsent(name, n -> {
            try (InputStream in = OpenApiDocument.class.getClassLoader().getResourceAsStream(n)) {
                if (in == null) {
                    throw new IllegalStateException(n + " is missing from this build (generated in process-classes)");
                }
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
