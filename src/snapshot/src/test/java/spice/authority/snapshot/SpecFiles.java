package spice.authority.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

/** Locates and loads the shared spec kit (../shared/spec) as it is. */
public final class SpecFiles {
    private static final ObjectMapper JSON = new ObjectMapper();

    private SpecFiles() {}

    /** The spec directory: system property {@code spice.spec.dir}, else ../shared/spec upwards. */
    public static Path specDir() {
        String prop = System.getProperty("spice.spec.dir");
        if (prop != null && Files.isDirectory(Path.of(prop))) {
            return Path.of(prop).normalize();
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("../shared/spec").normalize();
            if (Files.isDirectory(candidate.resolve("vectors"))) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("spec kit not found: set -Dspice.spec.dir or keep ../shared/spec beside the repo");
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
