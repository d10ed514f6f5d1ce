package spice.authority.snapshot.payload;

import java.util.List;
import spice.authority.snapshot.json.GoJsonWriter;

/**
 * The canonical encoder: emits byte-for-byte what the reference's {@code json.Marshal} emits for
 * the decoded value (wire-format.md b.1–b.2) in the value's format: fixed member order, every
 * member present except the optional part members (omitted when empty), arrays never null, data
 * compacted; v1alpha3 adds {@code workspace_fingerprint} after the compatibility identity
 * (wire-format-v1alpha3.md section 2).
 */
final class PayloadEncoder {
    private PayloadEncoder() {}

    static GoJsonWriter encode(Raw.Snapshot s, int sizeHint) {
        return encode(s, new GoJsonWriter(sizeHint));
    }

    /**
     * Encodes into {@code w}.
     *
     * @throws GoJsonWriter.Mismatch {@code w} compares, and the encoding differs from what it expects
     */
    static GoJsonWriter encode(Raw.Snapshot s, GoJsonWriter w) {
        w.ascii("{\"version\":").string(s.version)
                .ascii(",\"run_id\":").string(s.runId)
                .ascii(",\"definition\":{\"name\":").string(s.definition.name)
                .ascii(",\"model\":").string(s.definition.model)
                .ascii(",\"max_turns\":").unsigned(s.definition.maxTurns)
                .ascii("},\"completed_turns\":").unsigned(s.completedTurns)
                .ascii(",\"history\":[");
        List<Raw.Message> history = s.history.view();
        for (int m = 0; m < history.size(); m++) {
            if (m > 0) {
                w.raw(',');
            }
            Raw.Message msg = history.get(m);
            w.ascii("{\"id\":").string(msg.id).ascii(",\"role\":").string(msg.role).ascii(",\"parts\":[");
            List<Raw.Part> parts = msg.parts.view();
            for (int p = 0; p < parts.size(); p++) {
                if (p > 0) {
                    w.raw(',');
                }
                Raw.Part part = parts.get(p);
                w.ascii("{\"kind\":").string(part.kind);
                if (!part.text.isEmpty()) {
                    w.ascii(",\"text\":").string(part.text);
                }
                if (!part.name.isEmpty()) {
                    w.ascii(",\"name\":").string(part.name);
                }
                if (!part.callId.isEmpty()) {
                    w.ascii(",\"call_id\":").string(part.callId);
                }
                if (!part.namespace.isEmpty()) {
                    w.ascii(",\"namespace\":").string(part.namespace);
                }
                if (part.hasData()) {
                    w.ascii(",\"data\":").compactRaw(part.data);
                }
                w.raw('}');
            }
            w.ascii("]}");
        }
        w.ascii("],\"plan_identity\":{\"compiled_identities\":");
        stringArray(w, s.plan.compiledIdentities.view());
        w.ascii(",\"snapshot_compatibility_identity\":").string(s.plan.snapshotCompatibilityIdentity);
        if (s.format.hasWorkspaceFingerprint()) {
            // v1alpha3: always written, also when empty
            w.ascii(",\"workspace_fingerprint\":").string(s.plan.workspaceFingerprint);
        }
        w.ascii(",\"tool_plan_id\":").string(s.plan.toolPlanId)
                .ascii(",\"fingerprint\":").string(s.plan.fingerprint)
                .ascii("},\"seen_interaction_ids\":");
        stringArray(w, s.seenInteractionIds.view());
        w.ascii(",\"last_sequence\":").unsigned(s.lastSequence)
                .ascii(",\"status\":").string(s.status)
                .raw('}');
        return w;
    }

    private static void stringArray(GoJsonWriter w, List<String> values) {
        w.raw('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                w.raw(',');
            }
            w.string(values.get(i));
        }
        w.raw(']');
    }
}
