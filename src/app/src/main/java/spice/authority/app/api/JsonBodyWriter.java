package spice.authority.app.api;

import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.MessageBodyWriter;
import jakarta.ws.rs.ext.Provider;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.List;

/** Writes the API's response records ({@link Json.Body}) and lists of them as JSON. */
@Provider
@Produces(MediaType.APPLICATION_JSON)
public class JsonBodyWriter implements MessageBodyWriter<Object> {
    @Override
    public boolean isWriteable(Class<?> type, Type genericType, Annotation[] annotations, MediaType mediaType) {
        if (Json.Body.class.isAssignableFrom(type)) {
            return true;
        }
        return List.class.isAssignableFrom(type) && genericType instanceof ParameterizedType pt
                && pt.getActualTypeArguments()[0] instanceof Class<?> c && Json.Body.class.isAssignableFrom(c);
    }

    @Override
    public void writeTo(Object value, Class<?> type, Type genericType, Annotation[] annotations, MediaType mediaType,
                        MultivaluedMap<String, Object> headers, OutputStream out) throws IOException {
        Json.write(value, out);
    }
}
