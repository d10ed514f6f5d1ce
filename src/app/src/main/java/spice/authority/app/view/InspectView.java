package spice.authority.app.view;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.Part;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Role;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The readable view of an envelope shared by {@code snapshot inspect} and
 * {@code POST /v1/snapshots/inspect}: fields, checks, claim shape and a payload summary. Never
 * conversation text, never the claim MAC, never a statement of authenticity.
 */
public final class InspectView {
    private InspectView() {}

    /** The view and whether every check passed. */
    public record Result(Map<String, Object> view, boolean ok) {}

    public static Result of(Envelope env, String encoding, String file) {
        boolean ok = true;
        Map<String, Object> v = new LinkedHashMap<>();
        if (file != null) {
            v.put("file", file);
        }
        v.put("encoding", encoding);
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("format", env.format());
        e.put("run_id", env.runId());
        e.put("last_sequence", Long.toUnsignedString(env.lastSequence()));
        e.put("lifecycle", env.lifecycleName());
        e.put("payload_bytes", env.payloadLength());
        e.put("sha256", GoText.hex(env.sha256()));
        e.put("encoded_bytes", env.encodedLength());
        v.put("envelope", e);

        Map<String, Object> checks = new LinkedHashMap<>();
        try {
            Envelopes.validate(env);
            checks.put("structure", "ok");
        } catch (EnvelopeRejectedException ex) {
            ok = false;
            checks.put("structure", ex.getMessage()); // E-FORMAT names the format
        }
        boolean digestOk = MessageDigest.isEqual(HmacSha256.sha256(env.payload()), env.sha256());
        ok &= digestOk;
        checks.put("digest", digestOk ? "ok: sha256 matches the payload" : "mismatch: sha256 does not match the payload");
        ok &= env.claim().isPresent();
        checks.put("claim_shape", !env.hasAuthority() ? "missing"
                : env.claim().isPresent() ? "ok: 32-byte scope, generation >= 1, 32-byte HMAC" : "malformed");
        Snapshot snapshot = null;
        try {
            // the payload must be of the envelope's format, when that is one
            snapshot = SnapshotFormat.fromWire(env.format()).isPresent()
                    ? Snapshot.decode(env.payload(), Set.of(SnapshotFormat.fromWire(env.format()).get()))
                    : Snapshot.decode(env.payload());
            checks.put("payload", "ok: valid canonical " + snapshot.format().version());
        } catch (PayloadRejectedException ex) {
            ok = false;
            checks.put("payload", ex.getMessage());
        }
        if (snapshot != null) {
            boolean agree = snapshot.runId().equals(env.runId()) && snapshot.lastSequence() == env.lastSequence()
                    && snapshot.status().lifecycleNumber() == env.lifecycleNumber();
            ok &= agree;
            checks.put("agreement", agree ? "ok: run_id, last_sequence and lifecycle match the payload"
                    : "mismatch: run_id, last_sequence or lifecycle differ from the payload");
        } else {
            checks.put("agreement", "not checked: payload invalid");
        }
        v.put("checks", checks);
        if (env.hasAuthority()) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("scope_id", GoText.hex(env.authorityScopeId()));
            c.put("generation", Long.toUnsignedString(env.authorityGeneration()));
            c.put("hmac_sha256", env.authorityMacLength() + " bytes (not shown)");
            v.put("claim", c);
        }
        v.put("authenticity", "not verified: only the authority that holds the key can verify the claim (import through the helper)");
        if (snapshot != null) {
            v.put("payload", summary(snapshot));
        }
        return new Result(v, ok);
    }

    /** Counts and identities only; conversation text and tool data are never included. */
    static Map<String, Object> summary(Snapshot s) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("run_id", s.runId());
        p.put("status", s.status().wire());
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("name", s.definition().name());
        d.put("model", s.definition().model());
        d.put("max_turns", s.definition().maxTurns());
        p.put("definition", d);
        p.put("completed_turns", s.completedTurns());
        p.put("last_sequence", Long.toUnsignedString(s.lastSequence()));
        p.put("messages", s.history().size());
        Map<Role, Integer> roles = new EnumMap<>(Role.class);
        Map<String, Integer> parts = new LinkedHashMap<>();
        for (String k : new String[] {"text", "tool_call", "tool_result", "extension"}) {
            parts.put(k, 0);
        }
        for (Message m : s.history()) {
            roles.merge(m.role(), 1, Integer::sum);
            for (Part part : m.parts()) {
                parts.merge(part.kind(), 1, Integer::sum);
            }
        }
        Map<String, Object> byRole = new LinkedHashMap<>();
        for (Role r : Role.values()) {
            byRole.put(r.wire(), roles.getOrDefault(r, 0));
        }
        p.put("messages_by_role", byRole);
        p.put("parts_by_kind", parts);
        Map<String, Object> plan = new LinkedHashMap<>();
        plan.put("compiled_identities", new ArrayList<>(s.planIdentity().compiledIdentities()));
        plan.put("snapshot_compatibility_identity", s.planIdentity().snapshotCompatibilityIdentity());
        if (s.format().hasWorkspaceFingerprint()) {
            plan.put("workspace_fingerprint", s.planIdentity().workspaceFingerprint());
        }
        plan.put("tool_plan_id", s.planIdentity().toolPlanId());
        plan.put("fingerprint", s.planIdentity().fingerprint());
        plan.put("importable_plan", !s.planIdentity().snapshotCompatibilityIdentity().isEmpty());
        p.put("plan_identity", plan);
        p.put("seen_interaction_ids", s.seenInteractionIds().size());
        p.put("resumable", !s.status().isTerminal());
        return p;
    }

}
