package spice.authority.app.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;

/** Small JSON bodies of the control API (strict: unknown members refused). */
public final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(SerializationFeature.INDENT_OUTPUT);

    private Json() {}

    public static <T> T read(byte[] body, Class<T> type) {
        if (body == null || body.length == 0) {
            return null;
        }
        if (body.length > 1 << 20) {
            throw new ApiException(413, "invalid_request", "control body larger than 64 KiB");
        }
        try {
            return MAPPER.readValue(body, type);
        } catch (IOException e) {
            throw ApiException.invalidRequest("malformed JSON body (expected " + type.getSimpleName() + ")");
        }
    }

    public static String write(Object o) {
        try {
            return MAPPER.writeValueAsString(o);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
