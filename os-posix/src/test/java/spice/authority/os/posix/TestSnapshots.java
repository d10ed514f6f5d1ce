package spice.authority.os.posix;

import java.nio.charset.StandardCharsets;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/** Valid canonical v1alpha2 payloads for the os-posix tests that drive the run authority. */
final class TestSnapshots {
    private TestSnapshots() {}

    static Snapshot of(String runId, String status, long lastSequence) {
        String json = "{\"version\":\"spice.agent.snapshot/v1alpha2\",\"run_id\":\"" + runId + "\",\"definition\":{\"name\":\"test\","
                + "\"model\":\"model\",\"max_turns\":3},\"completed_turns\":1,\"history\":[{\"id\":\"input-1\",\"role\":\"user\","
                + "\"parts\":[{\"kind\":\"text\",\"text\":\"hello\"}]}],\"plan_identity\":{\"compiled_identities\":[\"broker:injected\","
                + "\"provider:injected\",\"stage:kernel\"],\"snapshot_compatibility_identity\":\"tests:v1\",\"tool_plan_id\":\"generation-1\","
                + "\"fingerprint\":\"sha256:193164941cc41295aced07d6adbc5d5de7e53e6e6da6b7496837bd0b54e63296\"},\"seen_interaction_ids\":[],"
                + "\"last_sequence\":" + lastSequence + ",\"status\":\"" + status + "\"}";
        try {
            return Snapshot.decode(json.getBytes(StandardCharsets.UTF_8));
        } catch (PayloadRejectedException e) {
            throw new AssertionError(e);
        }
    }

    static Snapshot suspended(String runId) {
        return of(runId, "suspended", 7);
    }

    static Snapshot completed(String runId) {
        return of(runId, "completed", 9);
    }
}
