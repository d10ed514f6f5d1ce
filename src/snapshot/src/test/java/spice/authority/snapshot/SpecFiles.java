package spice.authority.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * Locates and loads the in-repository copy of the spec kit, {@code spec-kit/} at the repository
 * root (see spec-kit/README.md), as it is. Nothing outside the repository is searched.
 */
public final class SpecFiles {
    /** The system property by which the build passes the kit's directory (root pom.xml). */
    public static final String PROPERTY = "spice.spec.dir";

    private static final String EXPECTED = "the in-repository copy spec-kit/ at the repository root";
    private static final ObjectMapper JSON = new ObjectMapper();

    private SpecFiles() {}

    /**
     * The kit's directory, from the system property {@value #PROPERTY}, which the Maven build sets
     * to {@code ${maven.multiModuleProjectDirectory}/spec-kit}.
     *
     * @throws IllegalStateException if the property is unset or names no directory
     */
    public static Path specDir() {
        return locate(System.getProperty(PROPERTY));
    }

    /** {@link #specDir()} for a given value of the property (null when unset). */
    static Path locate(String prop) {
        if (prop == null || prop.isBlank()) {
            throw new IllegalStateException("spec kit location not set: the tests read " + EXPECTED
                    + ", passed as -D" + PROPERTY + "=<repository>/spec-kit (./mvnw does this)");
        }
        Path dir = Path.of(prop).toAbsolutePath().normalize();
        if (!Files.isDirectory(dir)) {
            throw new IllegalStateException("spec kit not found at " + dir + ": expected " + EXPECTED
                    + " (see spec-kit/README.md)");
        }
        return dir;
    }

    public static Path resolve(String relative) {
        return specDir().resolve(relative);
    }

    public static JsonNode json(String relative) {
        try {
            return JSON.readTree(resolve(relative).toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] bytes(String relative) {
        try {
            return Files.readAllBytes(resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    public static long u64(JsonNode node, String field) {
        JsonNode dec = node.get(field + "_decimal");
        if (dec != null) {
            return Long.parseUnsignedLong(dec.asText());
        }
        return Long.parseUnsignedLong(node.get(field).asText());
    }
}
