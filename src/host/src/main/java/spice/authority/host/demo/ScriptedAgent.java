package spice.authority.host.demo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import spice.authority.host.engine.EngineIdentity;
import spice.authority.host.engine.Model;
import spice.authority.host.engine.Tool;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.payload.Definition;
import spice.authority.snapshot.payload.JsonValue;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.plan.ToolDefinition;
import spice.authority.snapshot.plan.ToolDefinition.Capability;
import spice.authority.snapshot.plan.ToolDefinition.Effect;
import spice.authority.snapshot.plan.ToolDefinition.ReplaySafety;

/**
 * The demo's scripted agent: a deterministic model and two tools, no network. Each turn {@code t}
 * looks up notes (read-only {@code read_notes}, call {@code t<t>-read}), records one ledger line
 * (mutating {@code append_ledger}, call {@code t<t>-write}), and answers.
 *
 * <p>The ledger is a file with one line {@code <run_id> <call_id>} per executed mutating call,
 * written with fsync before the tool returns: the demo counts it to show that no call ran twice.
 */
public final class ScriptedAgent {
    /** The demo's run definition: four turns. */
    public static final Definition DEFINITION = new Definition("scripted-agent", "scripted-model/1", 4);
    /** The generated identity the demo's engines share (importable). */
    public static final EngineIdentity IDENTITY = EngineIdentity.generated("spice-authority-demo/v1",
            List.of("provider:spice-authority-demo/scripted-model@1", "stage:kernel", "tool:spice-authority-demo/tools@1"));
    /** The demo's tool plan ID. */
    public static final String PLAN_ID = "demo-generation-1";
    /**
     * The workspace fingerprint of the demo's v1alpha3 engines: {@code sha256:} and the SHA-256 of
     * {@code spice-authority-demo/workspace} (the value is the host's to define; the demo's
     * hosts share one workspace).
     */
    public static final String WORKSPACE = "sha256:" + spice.authority.snapshot.json.GoText.hex(
            spice.authority.snapshot.crypto.HmacSha256.sha256("spice-authority-demo/workspace".getBytes(StandardCharsets.UTF_8)));

    private ScriptedAgent() {}

    /** The identity of the demo's engines of {@code format}: {@link #IDENTITY}, with {@link #WORKSPACE} for v1alpha3. */
    public static EngineIdentity identity(SnapshotFormat format) {
        return format.hasWorkspaceFingerprint() ? IDENTITY.withWorkspace(WORKSPACE) : IDENTITY;
    }

    /**
     * The format a demo option names by its version ({@code v1alpha2}, {@code v1alpha3}).
     *
     * @throws IllegalArgumentException for any other text
     */
    public static SnapshotFormat format(String version) {
        for (SnapshotFormat f : SnapshotFormat.values()) {
            if (f.version().equals(version)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown snapshot format '" + version + "': use v1alpha2 or v1alpha3");
    }

    /** The deterministic model: per turn a lookup round, a ledger round, then the answer. */
    public static Model model() {
        return request -> {
            int t = request.turn();
            String read = "t" + t + "-read";
            String write = "t" + t + "-write";
            if (!hasResult(request.history(), read)) {
                return new Model.Reply.ToolRound("turn " + t + ": looking up the notes",
                        List.of(new Model.ToolCall(read, "read_notes", JsonValue.of("{\"topic\":\"turn-" + t + "\"}"))));
            }
            if (!hasResult(request.history(), write)) {
                return new Model.Reply.ToolRound("turn " + t + ": recording it",
                        List.of(new Model.ToolCall(write, "append_ledger", JsonValue.of("{\"entry\":\"turn " + t + " done\"}"))));
            }
            return new Model.Reply.Final("turn " + t + " is done");
        };
    }

    private static boolean hasResult(List<Message> history, String callId) {
        for (Message m : history) {
            for (Part p : m.parts()) {
                if (p instanceof Part.ToolResult r && r.callId().equals(callId)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The read-only tool. */
    public static Tool readNotes() {
        ToolDefinition d = new ToolDefinition("read_notes", "Reads the notes on a topic.",
                "{\"type\":\"object\",\"properties\":{\"topic\":{\"type\":\"string\"}}}".getBytes(StandardCharsets.UTF_8),
                Effect.READ_ONLY, ReplaySafety.SAFE, List.of(Capability.FILESYSTEM_READ));
        return Tool.of(d, (runId, callId, arguments) -> JsonValue.of("{\"notes\":\"nothing new\"}"));
    }

    /**
     * The mutating tool: appends {@code <run_id> <call_id>} to {@code ledger} (fsync). In the call
     * {@code hangInCall} (null: none) it then blocks forever: the side effect happened, its answer
     * is in flight, and the demo kills the host.
     */
    public static Tool appendLedger(Path ledger, String hangInCall) {
        ToolDefinition d = new ToolDefinition("append_ledger", "Appends one entry to the ledger.",
                "{\"type\":\"object\",\"properties\":{\"entry\":{\"type\":\"string\"}}}".getBytes(StandardCharsets.UTF_8),
                Effect.MUTATING, ReplaySafety.UNSAFE, List.of(Capability.FILESYSTEM_WRITE));
        return Tool.of(d, (runId, callId, arguments) -> {
            append(ledger, runId + " " + callId + "\n");
            if (callId.equals(hangInCall)) {
                // The side effect is done but its answer never comes: in flight until the
                // process is killed.
                new CountDownLatch(1).await();
            }
            return JsonValue.of("{\"appended\":true}");
        });
    }

    static void append(Path file, String line) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            ByteBuffer b = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
    }
}
