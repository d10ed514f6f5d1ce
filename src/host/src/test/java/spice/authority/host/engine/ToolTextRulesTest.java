package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RetryPolicy;
import spice.authority.snapshot.payload.Definition;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.plan.ToolDefinition;

/**
 * The tool layer's text rules (wire-format-v1alpha3.md section 5): names and call IDs valid UTF-8
 * without NUL, CR, LF or TAB anywhere; schemas, arguments and results valid UTF-8. The payload
 * rules accept an inner NUL, CR, LF or TAB, so each of these refusals is the engine's own.
 */
class ToolTextRulesTest {
    private static final List<String> BAD_INNER = List.of("a\u0000b", "a\rb", "a\nb", "a\tb");
    /** {@code {"s":"<0xFF>"}}: one JSON value, not UTF-8. */
    private static final byte[] NOT_UTF8 = {'{', '"', 's', '"', ':', '"', (byte) 0xFF, '"', '}'};

    private static ToolDefinition definition(String name, byte[] schema) {
        return new ToolDefinition(name, "A tool.", schema, ToolDefinition.Effect.READ_ONLY, ToolDefinition.ReplaySafety.SAFE,
                List.of());
    }

    private static ToolDefinition definition(String name) {
        return definition(name, "{}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void toolOf_nameWithNulCrLfOrTab_refused() {
        for (String name : BAD_INNER) {
            ToolDefinition d = definition(name); // the payload rules take it
            assertThatThrownBy(() -> Tool.of(d, (r, c, a) -> JsonValue.of("{}"))).as(name)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL, CR, LF or TAB");
        }
    }

    @Test
    void toolOf_schemaNotUtf8_refused() {
        ToolDefinition d = definition("t", NOT_UTF8);
        assertThatThrownBy(() -> Tool.of(d, (r, c, a) -> JsonValue.of("{}")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not valid UTF-8");
    }

    @Test
    void staticToolPlan_aToolNotMadeByToolOf_heldToTheSameRules() {
        Tool sneaky = new Tool() {
            @Override
            public ToolDefinition definition() {
                return ToolTextRulesTest.definition("a\tb");
            }

            @Override
            public JsonValue call(String runId, String callId, JsonValue arguments) {
                return JsonValue.of("{}");
            }
        };
        assertThatThrownBy(() -> StaticToolPlan.of(List.of(sneaky))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StaticToolPlan.named("p", List.of(sneaky))).isInstanceOf(IllegalArgumentException.class);
    }

    /** One turn of a model whose first reply is {@code call}, against the fake helper; the run must fail. */
    private static void refusedCall(Path tmp, Model.ToolCall call, JsonValue result, boolean toolRuns) throws Exception {
        Path sock = java.nio.file.Files.createDirectories(tmp).resolve("h.sock");
        AtomicInteger calls = new AtomicInteger();
        Tool t = Tool.of(definition("t"), (r, c, a) -> {
            calls.incrementAndGet();
            return result;
        });
        Model model = req -> new Model.Reply.ToolRound("", List.of(call));
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Engine engine = Engine.builder(Authorities.of(client, client.openSession()), model, StaticToolPlan.of(List.of(t))).build();
            Run run = engine.start("run-1", new Definition("agent", "model", 4), "hello");
            assertThatThrownBy(run::runTurn).isInstanceOf(RunFailedException.class);
            assertThat(run.phase()).isEqualTo(Run.Phase.FAILED);
            assertThat(calls.get()).as("tool calls").isEqualTo(toolRuns ? 1 : 0);
            assertThat(run.events().readAfter(0).stream().filter(e -> e.type() == Event.Type.TOOL_CALL_COMPLETED)).isEmpty();
        }
    }

    @Test
    void modelCall_callIdWithNulCrLfOrTab_failsTheRunBeforeAnyTool(@TempDir Path tmp) throws Exception {
        int i = 0;
        for (String id : BAD_INNER) {
            refusedCall(tmp.resolve("c" + i++), new Model.ToolCall(id, "t", JsonValue.of("{}")), JsonValue.of("{}"), false);
        }
    }

    @Test
    void modelCall_callIdOrNameNotUtf8_failsTheRunBeforeAnyTool(@TempDir Path tmp) throws Exception {
        refusedCall(tmp.resolve("a"), new Model.ToolCall("c\uD800", "t", JsonValue.of("{}")), JsonValue.of("{}"), false);
        refusedCall(tmp.resolve("b"), new Model.ToolCall("c1", "t\uDC00", JsonValue.of("{}")), JsonValue.of("{}"), false);
    }

    @Test
    void modelCall_toolNameWithNulCrLfOrTab_failsTheRunBeforeAnyTool(@TempDir Path tmp) throws Exception {
        int i = 0;
        for (String name : BAD_INNER) {
            refusedCall(tmp.resolve("n" + i++), new Model.ToolCall("c1", name, JsonValue.of("{}")), JsonValue.of("{}"), false);
        }
    }

    @Test
    void modelCall_argumentsNotUtf8_failsTheRunBeforeAnyTool(@TempDir Path tmp) throws Exception {
        refusedCall(tmp, new Model.ToolCall("c1", "t", JsonValue.of(NOT_UTF8)), JsonValue.of("{}"), false);
    }

    @Test
    void toolResult_notUtf8_failsTheRun_callStaysUnresolved(@TempDir Path tmp) throws Exception {
        refusedCall(tmp, new Model.ToolCall("c1", "t", JsonValue.of("{}")), JsonValue.of(NOT_UTF8), true);
    }
}
