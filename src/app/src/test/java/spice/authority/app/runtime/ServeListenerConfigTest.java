package spice.authority.app.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The listener of serve as Quarkus configuration, from the endpoint alone. */
class ServeListenerConfigTest {
    @Test
    void unixSocket_isTheOnlyListener_onTheNativeTransport() {
        assertThat(ServeListenerConfig.properties(new Endpoint.Unix("/run/user/1000/spice-agent/authority.sock")))
                .isEqualTo(Map.of("quarkus.http.host-enabled", "false", "quarkus.http.domain-socket-enabled", "true",
                        "quarkus.http.domain-socket", "/run/user/1000/spice-agent/authority.sock",
                        "quarkus.vertx.prefer-native-transport", "true"));
    }

    @Test
    void loopbackTcp_isTheOnlyListener() {
        assertThat(ServeListenerConfig.properties(new Endpoint.Tcp("::1", 7878, "/t/token")))
                .isEqualTo(Map.of("quarkus.http.host-enabled", "true", "quarkus.http.host", "::1", "quarkus.http.port", "7878",
                        "quarkus.http.domain-socket-enabled", "false"));
    }

    @Test
    void withoutServe_noProperty_andAboveSystemProperties() {
        assertThat(ServeListenerConfig.properties(null)).isEmpty();
        ServeListenerConfig source = new ServeListenerConfig();
        assertThat(source.getOrdinal()).isGreaterThan(400);
        assertThat(source.getPropertyNames()).isEmpty(); // no context was handed over in this JVM
    }
}
