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
        boolean json = format != null ? format.equalsIgnoreCase("json")
                : accept != null && accept.toLowerCase(Locale.ROOT).contains("application/json");
        return Response.ok(json ? Documents.JSON_BYTES : Documents.YAML_BYTES, json ? JSON : YAML).build();
    }

    /** Read on the first request, once. */
    private static final class Documents {
        static final byte[] YAML_BYTES = read(RESOURCE + ".yaml");
        static final byte[] JSON_BYTES = read(RESOURCE + ".json");

        private static byte[] read(String name) {
            try (InputStream in = OpenApiDocument.class.getClassLoader().getResourceAsStream(name)) {
                if (in == null) {
                    throw new IllegalStateException(name + " is missing from the build (generated in process-classes)");
                }
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
