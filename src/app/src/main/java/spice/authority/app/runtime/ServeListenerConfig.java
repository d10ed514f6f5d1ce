package spice.authority.app.runtime;

import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Where {@code serve} listens, as the Quarkus configuration of its HTTP server: the Unix socket
 * ({@code quarkus.http.domain-socket*}, with Vert.x's native transport) or loopback TCP
 * ({@code quarkus.http.host}/{@code port}), from the endpoint {@code serve} handed over
 * ({@link ServeProducers}) before Quarkus started. Registered through
 * {@code META-INF/services}; read when Quarkus builds its runtime configuration.
 *
 * <p><b>Guarantees.</b> Nothing is written to the JVM's system properties. Without a handed-over
 * endpoint (a build, a test, any command but {@code serve}) it holds no property, and
 * {@code application.properties} decides. Its ordinal is above the system properties': the
 * options of {@code serve} decide the listener, as they always did.
 */
public final class ServeListenerConfig implements ConfigSource {
    /** Above system properties (400) and the environment (300). */
    static final int ORDINAL = 450;

    @Override
    public Map<String, String> getProperties() {
        return properties(ServeProducers.preparedEndpoint());
    }

    @Override
    public Set<String> getPropertyNames() {
        return getProperties().keySet();
    }

    @Override
    public String getValue(String propertyName) {
        return getProperties().get(propertyName);
    }

    @Override
    public String getName() {
        return "spice-authority serve listener";
    }

    @Override
    public int getOrdinal() {
        return ORDINAL;
    }

    /** The listener properties for {@code endpoint}; none without one. */
    static Map<String, String> properties(Endpoint endpoint) {
        if (endpoint == null) {
            return Map.of();
        }
        return switch (endpoint) {
            case Endpoint.Unix u -> Map.of(
                    "quarkus.http.host-enabled", "false",
                    "quarkus.http.domain-socket-enabled", "true",
                    "quarkus.http.domain-socket", u.socketPath(),
                    "quarkus.vertx.prefer-native-transport", "true");
            case Endpoint.Tcp t -> Map.of(
                    "quarkus.http.host-enabled", "true",
                    "quarkus.http.host", t.host(),
                    "quarkus.http.port", Integer.toString(t.port()),
                    "quarkus.http.domain-socket-enabled", "false");
        };
    }
}
