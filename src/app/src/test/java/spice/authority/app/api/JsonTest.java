package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.app.view.JsonTree;

class JsonTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readsTheNamedMembers_nullAsAbsent_emptyBodyAsNoRequest() {
        assertThat(Dto.StartRequest.read(b("{\"run_id\": \"run-1\"}"), 65536)).isEqualTo(new Dto.StartRequest("run-1"));
        assertThat(Dto.SessionRequest.read(b(" {\"pid\":4242} "), 65536)).isEqualTo(new Dto.SessionRequest(4242L));
        assertThat(Dto.SessionRequest.read(b("{\"pid\":null}"), 65536)).isEqualTo(new Dto.SessionRequest(null));
        assertThat(Dto.SessionRequest.read(b("{}"), 65536)).isEqualTo(new Dto.SessionRequest(null));
        assertThat(Dto.SessionRequest.read(new byte[0], 65536)).isNull();
        assertThat(Dto.SessionRequest.read(null, 65536)).isNull();
    }

    @Test
    void refusesAnythingElseAsInvalidRequestWithoutEchoingTheBody() {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("{\"run_id\":\"a\",\"secret-looking\":1}", "unknown member in start request (allowed: run_id)");
        cases.put("{\"run_id\":\"a\",\"run_id\":\"b\"}", "malformed JSON body");
        cases.put("{\"run_id\":7}", "start request.run_id must be a string");
        cases.put("{\"run_id\":\"a\"} {}", "data after the start request object");
        cases.put("[\"run_id\"]", "expected a start request object");
        cases.put("{\"run_id\":\"a\"", "malformed JSON body");
        cases.put("\"run_id\"", "expected a start request object");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            assertThatThrownBy(() -> Dto.StartRequest.read(b(c.getKey()), 65536))
                    .as(c.getKey())
                    .isInstanceOfSatisfying(ApiException.class, e -> {
                        assertThat(e.getMessage()).contains(c.getValue()).doesNotContain("secret-looking");
                    });
        }
        for (String pid : List.of("\"42\"", "4.2", "1e3", "99999999999999999999", "true")) {
            assertThatThrownBy(() -> Dto.SessionRequest.read(b("{\"pid\":" + pid + "}"), 65536))
                    .as(pid).isInstanceOf(ApiException.class).hasMessageContaining("session request.pid must be an integer");
        }
    }

    @Test
    void writesTheResponseRecordsWithTheApiNames() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Json.write(List.of(new Dto.RunView("run-1", "ACTIVE", Dto.u64(-1L), true),
                new Dto.ImportView("i1", "run-2", BigInteger.ONE, BigInteger.TWO)), out);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(
                "[{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":18446744073709551615,\"owned\":true},"
                        + "{\"import\":\"i1\",\"run_id\":\"run-2\",\"last_sequence\":1,\"next_sequence\":2}]");

        out.reset();
        Json.write(new Dto.AuthorityView(null, null, "ready", null, "unix:/s", 1, 2, 3, 4, Map.of("ACTIVE", 2), 3,
                Map.of("bad_mac", 3), Map.of("signing", java.util.List.of("f2", "f3"))), out);
        assertThat(new ObjectMapper().readTree(out.toByteArray()).toString()).isEqualTo(
                "{\"state\":\"ready\",\"endpoint\":\"unix:/s\",\"sessions\":1,\"owned_runs\":2,\"imports\":3,\"leases\":4,"
                        + "\"runs_by_phase\":{\"ACTIVE\":2},\"unreadable_records\":3,\"unreadable_records_by_reason\":{\"bad_mac\":3},"
                        + "\"formats\":{\"signing\":[\"f2\",\"f3\"]}}");

        out.reset();
        Json.write(new Dto.SessionResponse("s1", 7), out);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("{\"session\":\"s1\",\"pid\":7}");
    }

    @Test
    void prettyPrintsTreesLikeTheEarlierDataBindingOutput() throws Exception {
        Map<String, Object> tree = new LinkedHashMap<>();
        tree.put("a", "x");
        tree.put("n", 3);
        tree.put("list", List.of(true, 2L));
        tree.put("nothing", null);
        String expected = new ObjectMapper().enable(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT)
                .writeValueAsString(tree);
        assertThat(JsonTree.pretty(tree)).isEqualTo(expected);
    }

    @Test
    void refusesBodiesThatAreNotPlainUtf8() {
        byte[][] bodies = {
            {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF, '{', '}'},                       // byte order mark
            {'{', '"', 'r', 'u', 'n', '_', 'i', 'd', '"', ':', '"', (byte) 0xC0, (byte) 0xAF, '"', '}'}, // overlong '/'
            "{\"run_id\":\"a\"}".getBytes(StandardCharsets.UTF_16BE),
            "{\"run_id\":\"a\"}".getBytes(StandardCharsets.UTF_16LE),
        };
        for (byte[] body : bodies) {
            assertThatThrownBy(() -> Dto.StartRequest.read(body, 65536)).isInstanceOf(ApiException.class)
                    .hasMessageStartingWith("malformed JSON body");
        }
    }

    @Test
    void writingLeavesTheResponseStreamOpen() throws Exception {
        boolean[] closed = {false};
        ByteArrayOutputStream out = new ByteArrayOutputStream() {
            @Override
            public void close() {
                closed[0] = true;
            }
        };
        Json.write(new Dto.SessionResponse("s", 1), out);
        assertThat(closed[0]).isFalse();
        assertThat(out.size()).isPositive();
    }

    @Test
    void refusesABodyAboveTheControlLimit() {
        assertThatThrownBy(() -> Dto.StartRequest.read(b("{\"run_id\":\"" + "a".repeat(100) + "\"}"), 64))
                .isInstanceOf(ApiException.class).hasMessageContaining("larger than 64 bytes");
    }

    @Test
    void memberNames_ofANestedObject_inDocumentOrder() {
        assertThat(Json.memberNames(b("{\"a\":[1,{\"x\":2}],\"paths\":{\"/b\":{\"get\":{}},\"/a\":1},\"z\":0}"), "paths"))
                .containsExactly("/b", "/a");
        assertThatThrownBy(() -> Json.memberNames(b("[]"), "paths")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not a JSON object");
        assertThatThrownBy(() -> Json.memberNames(b("{\"paths\":[]}"), "paths")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member paths is not an object");
        assertThatThrownBy(() -> Json.memberNames(b("{\"other\":{}}"), "paths")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no member paths");
        assertThatThrownBy(() -> Json.memberNames(b("{\"paths\":{"), "paths")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("malformed JSON document");
    }
}
