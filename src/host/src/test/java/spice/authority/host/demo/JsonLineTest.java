package spice.authority.host.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.host.RawJson;

class JsonLineTest {
    @Test
    void line_startsWithProcPidEvent_escapes_andReadsBack() throws Exception {
        String line = JsonLine.of("A", 42, "ImportRefused").put("code", "busy").put("detail", "a \"quoted\"\nline\u2028")
                .put("seq", 7L).put("ok", true).put("absent", null).toString();
        assertThat(line).startsWith("{\"proc\":\"A\",\"pid\":42,\"event\":\"ImportRefused\"").doesNotContain("\n").doesNotContain("absent");
        Map<String, Object> m = RawJson.of(line).object();
        assertThat(m).containsEntry("detail", "a \"quoted\"\nline\u2028").containsEntry("seq", 7L).containsEntry("ok", true);
    }
}
