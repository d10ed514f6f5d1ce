package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Health bodies in MicroProfile Health's JSON form. */
class HealthTest {
    private static String json(Object o) {
        return new String(Json.bytes(o), StandardCharsets.UTF_8);
    }

    @Test
    void livenessHasNoChecks_andIsUp() {
        assertThat(json(Health.body(List.of()))).isEqualTo("{\"status\":\"UP\",\"checks\":[]}");
    }

    @Test
    void readinessWithoutAnOpenAuthority_isDownWithItsState() {
        // No helper is serving in this JVM: the authority is unavailable, so not ready.
        Map<String, Object> check = new Health().authority();
        assertThat(json(Health.body(List.of(check)))).isEqualTo("{\"status\":\"DOWN\",\"checks\":[{\"name\":\"authority\","
                + "\"status\":\"DOWN\",\"data\":{\"state\":\"unavailable\"}}]}");
    }

    @Test
    void oneDownCheck_makesTheWholeAnswerDown() {
        Map<String, Object> up = Map.of("name", "a", "status", "UP");
        Map<String, Object> down = Map.of("name", "b", "status", "DOWN");
        assertThat(Health.body(List.of(up)).get("status")).isEqualTo("UP");
        assertThat(Health.body(List.of(up, down)).get("status")).isEqualTo("DOWN");
    }
}
