package spice.authority.snapshot.payload;

import static spice.authority.snapshot.json.GoText.containsGoControl;
import static spice.authority.snapshot.json.GoText.containsGoSpace;
import static spice.authority.snapshot.json.GoText.isGoSpace;
import static spice.authority.snapshot.json.GoText.isToken;
import static spice.authority.snapshot.json.GoText.utf8Length;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.json.GoText;

/**
 * The validation rules of wire-format.md b.4–b.6 (and, for v1alpha3, P-WORKSPACE of
 * wire-format-v1alpha3.md section 3), applied in the reference's check order to a decoded
 * {@link Raw.Snapshot} whose format decoding has settled; the first broken rule is reported. Byte limits count the UTF-8
 * bytes of decoded strings and the raw bytes of {@code data}.
 */
final class PayloadRules {    static final int MIB = 1 << 20;
    static final long MAX_PAYLOAD = 16L * MIB;
    static final long MAX_MESSAGE = 4L * MIB;
    static final int MAX_PARTS = 128;
    static final int MAX_MESSAGES = 4096;
    static final int MAX_INTERACTIONS = 4096;
    static final int MAX_COMPILED = 512;
    static final int MAX_TURNS = 1000;

    private static final Set<String> CATEGORIES =
            Set.of("provider", "stage", "observer", "broker", "tool", "decorator");

    private PayloadRules() {}

    private static PayloadRejectedException reject(PayloadRule rule, String where) {
        return new PayloadRejectedException(rule, where);
    }

    static void check(Raw.Snapshot s) throws PayloadRejectedException {
        // 1. version: settled by decoding (Snapshot), before decoding errors and trailing data
        if (s.format == null || !s.format.wire().equals(s.version)) {
            throw reject(PayloadRule.P_VERSION, "version");
        }
        // 2. messages
        List<Raw.Message> history = s.history.view();
        long[] sizes = new long[history.size()];
        for (int m = 0; m < history.size(); m++) {
            sizes[m] = checkMessage(history.get(m), m);
        }
        if (s.history.overflowFailure != null) {
            throw s.history.overflowFailure; // messages past the retained ones, in document order
        }
        // 3. definition
        checkTrimmedNonEmpty(s.definition.name, PayloadRule.P_DEF_NAME, "definition.name");
        checkTrimmedNonEmpty(s.definition.model, PayloadRule.P_DEF_MODEL, "definition.model");
        if (s.definition.maxTurns < 1 || s.definition.maxTurns > MAX_TURNS) {
            throw reject(PayloadRule.P_DEF_TURNS, "definition.max_turns");
        }
        // 4. plan
        checkPlan(s.plan, s.format.hasWorkspaceFingerprint());
        // 5. run id: the one run-ID rule (token(96) plus our stricter rules: no control
        // character, valid Unicode text), as sent: a run ID the decoder had to repair is a
        // different run ID
        if (s.runIdSubstituted || !RunId.isValid(s.runId)) {
            throw reject(PayloadRule.P_RUNID, "run_id");
        }
        // 6. turns
        if (s.completedTurns > s.definition.maxTurns) {
            throw reject(PayloadRule.P_TURNS, "completed_turns");
        }
        // 7. history count
        if (s.history.count() == 0 || s.history.count() > MAX_MESSAGES) {
            throw reject(PayloadRule.P_HIST_COUNT, "history");
        }
        // 8. sequence: 1..2^64-2 (unsigned)
        if (s.lastSequence == 0 || s.lastSequence == -1L) {
            throw reject(PayloadRule.P_SEQ, "last_sequence");
        }
        // 9. status
        LifecycleStatus status = LifecycleStatus.fromWire(s.status);
        if (status == null) {
            throw reject(PayloadRule.P_STATUS, "status");
        }
        if (status == LifecycleStatus.SUSPENDED
                && (s.completedTurns < 1 || s.completedTurns > s.definition.maxTurns - 1)) {
            throw reject(PayloadRule.P_SUSPENDED_TURNS, "completed_turns");
        }
        // 10. interactions
        List<String> ids = s.seenInteractionIds.view();
        if (s.seenInteractionIds.count() > MAX_INTERACTIONS) {
            throw reject(PayloadRule.P_IA_COUNT, "seen_interaction_ids");
        }
        for (int i = 0; i < ids.size(); i++) {
            if (!isToken(ids.get(i), 128)) {
                throw reject(PayloadRule.P_IA_TOKEN, "seen_interaction_ids[" + i + "]");
            }
            if (i > 0 && GoText.compareUtf8(ids.get(i - 1), ids.get(i)) >= 0) {
                throw reject(PayloadRule.P_IA_ORDER, "seen_interaction_ids[" + i + "]");
            }
        }
        // 11. history walk
        checkHistory(history, sizes);
    }

    private static void checkTrimmedNonEmpty(String v, PayloadRule rule, String where) throws PayloadRejectedException {
        if (v.isEmpty() || isGoSpace(v.codePointAt(0)) || isGoSpace(v.codePointBefore(v.length()))) {
            throw reject(rule, where);
        }
    }

    /** Checks one message (step 2) and returns its accounted size. */
    static long checkMessage(Raw.Message msg, int m) throws PayloadRejectedException {
        if (!isToken(msg.id, 128)) {
            throw reject(PayloadRule.P_MSG_ID, "history[" + m + "].id");
        }
        long size = utf8Length(msg.id) + (long) utf8Length(msg.role);
        List<Raw.Part> parts = msg.parts.view();
        for (int p = 0; p < parts.size(); p++) {
            size += checkPart(parts.get(p), m, p);
        }
        if (msg.parts.overflowFailure != null) {
            throw msg.parts.overflowFailure; // parts past the retained ones, in document order
        }
        size += msg.parts.overflowBytes;
        if (Role.fromWire(msg.role) == null) {
            throw reject(PayloadRule.P_MSG_ROLE, "history[" + m + "].role");
        }
        if (msg.parts.count() == 0 || msg.parts.count() > MAX_PARTS) {
            throw reject(PayloadRule.P_MSG_PARTS, "history[" + m + "].parts");
        }
        if (size > MAX_MESSAGE) {
            throw reject(PayloadRule.P_MSG_SIZE, "history[" + m + "]");
        }
        return size;
    }

    /** Checks one part (step 2, per part) and returns its accounted size. */
    static long checkPart(Raw.Part part, int m, int p) throws PayloadRejectedException {
        switch (part.kind) {
            case "text" -> {
                if (!part.name.isEmpty() || !part.callId.isEmpty() || !part.namespace.isEmpty() || part.hasData()) {
                    throw reject(PayloadRule.P_PART_INACTIVE, loc(m, p));
                }
                int textBytes = utf8Length(part.text);
                if (textBytes == 0 || textBytes > MIB) {
                    throw reject(PayloadRule.P_TEXT, loc(m, p));
                }
            }
            case "tool_call", "tool_result" -> {
                if (!part.text.isEmpty() || !part.namespace.isEmpty()) {
                    throw reject(PayloadRule.P_PART_INACTIVE, loc(m, p));
                }
                if (!isToken(part.callId, 128)) {
                    throw reject(PayloadRule.P_CALL_ID, loc(m, p));
                }
                if (!isToken(part.name, 128)) {
                    throw reject(PayloadRule.P_TOOL_NAME, loc(m, p));
                }
                checkData(part, m, p);
            }
            case "extension" -> {
                if (!part.text.isEmpty() || !part.name.isEmpty() || !part.callId.isEmpty()) {
                    throw reject(PayloadRule.P_PART_INACTIVE, loc(m, p));
                }
                if (!isToken(part.namespace, 256)) {
                    throw reject(PayloadRule.P_NAMESPACE, loc(m, p));
                }
                checkData(part, m, p);
            }
            default -> throw reject(PayloadRule.P_PART_KIND, loc(m, p));
        }
        return partSize(part);
    }

    /** The accounted size of a part: kind, text, name, call_id, namespace and raw data bytes. */
    static long partSize(Raw.Part part) {
        return utf8Length(part.kind) + (long) utf8Length(part.text) + utf8Length(part.name)
                + utf8Length(part.callId) + utf8Length(part.namespace) + (part.data == null ? 0 : part.data.length);
    }

    private static void checkData(Raw.Part part, int m, int p) throws PayloadRejectedException {
        // Decoded data is always one syntactically valid value; builder data is a JsonValue.
        if (!part.hasData() || part.data.length > MIB) {
            throw reject(PayloadRule.P_DATA, loc(m, p));
        }
    }

    private static String loc(int m, int p) {
        return "history[" + m + "].parts[" + p + "]";
    }

    private static void checkPlan(Raw.Plan plan, boolean workspace) throws PayloadRejectedException {
        String id = plan.toolPlanId;
        if (!isToken(id, 256) || containsGoControl(id) || containsGoSpace(id)) {
            throw reject(PayloadRule.P_TOOLPLAN, "plan_identity.tool_plan_id");
        }
        List<String> compiled = plan.compiledIdentities.view();
        if (plan.compiledIdentities.count() == 0 || plan.compiledIdentities.count() > MAX_COMPILED) {
            throw reject(PayloadRule.P_PLAN_COUNT, "plan_identity.compiled_identities");
        }
        for (int i = 1; i < compiled.size(); i++) {
            if (GoText.compareUtf8(compiled.get(i - 1), compiled.get(i)) > 0) {
                throw reject(PayloadRule.P_PLAN_SORTED, "plan_identity.compiled_identities");
            }
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < compiled.size(); i++) {
            String c = compiled.get(i);
            String where = "plan_identity.compiled_identities[" + i + "]";
            if (!isToken(c, 256)) {
                throw reject(PayloadRule.P_PLAN_TOKEN, where);
            }
            if (!seen.add(c)) {
                throw reject(PayloadRule.P_PLAN_DUP, where);
            }
            int colon = c.indexOf(':');
            if (colon < 0 || colon == c.length() - 1) {
                throw reject(PayloadRule.P_PLAN_FORM, where);
            }
            if (!CATEGORIES.contains(c.substring(0, colon))) {
                throw reject(PayloadRule.P_PLAN_CATEGORY, where);
            }
        }
        String compat = plan.snapshotCompatibilityIdentity;
        if (!compat.isEmpty() && !isToken(compat, 256)) {
            throw reject(PayloadRule.P_COMPAT, "plan_identity.snapshot_compatibility_identity");
        }
        // v1alpha3: required exactly when the plan is importable; a non-empty value is always checked
        if (workspace && !PlanIdentity.workspaceAllowed(compat, plan.workspaceFingerprint)) {
            throw reject(PayloadRule.P_WORKSPACE, "plan_identity.workspace_fingerprint");
        }
        String fpr = plan.fingerprint;
        if (!fpr.startsWith("sha256:") || !GoText.isLowerHex(fpr.substring(7), 64)) {
            throw reject(PayloadRule.P_FPR, "plan_identity.fingerprint");
        }
    }

    private record Call(String name, boolean[] resolved) {}

    private static void checkHistory(List<Raw.Message> history, long[] sizes) throws PayloadRejectedException {
        if (!"user".equals(history.get(0).role)) {
            throw reject(PayloadRule.P_HIST_FIRST_USER, "history[0].role");
        }
        Set<String> messageIds = new HashSet<>(history.size() * 2);
        HashMap<String, Call> calls = new HashMap<>();
        int pending = 0;
        long total = 0;
        for (int m = 0; m < history.size(); m++) {
            Raw.Message msg = history.get(m);
            if (!messageIds.add(msg.id)) {
                throw reject(PayloadRule.P_MSG_ID_DUP, "history[" + m + "].id");
            }
            total += sizes[m];
            if (total > MAX_PAYLOAD) {
                throw reject(PayloadRule.P_HIST_SIZE, "history[" + m + "]");
            }
            List<Raw.Part> parts = msg.parts.view();
            for (int p = 0; p < parts.size(); p++) {
                Raw.Part part = parts.get(p);
                if (part.kind.equals("tool_call")) {
                    if (!msg.role.equals("assistant")) {
                        throw reject(PayloadRule.P_CALL_ROLE, loc(m, p));
                    }
                    if (calls.putIfAbsent(part.callId, new Call(part.name, new boolean[1])) != null) {
                        throw reject(PayloadRule.P_CALL_DUP, loc(m, p));
                    }
                    pending++;
                } else if (part.kind.equals("tool_result")) {
                    if (!msg.role.equals("tool")) {
                        throw reject(PayloadRule.P_RESULT_ROLE, loc(m, p));
                    }
                    Call call = calls.get(part.callId);
                    if (call == null || call.resolved[0] || !call.name.equals(part.name)) {
                        throw reject(PayloadRule.P_RESULT_MATCH, loc(m, p));
                    }
                    call.resolved[0] = true;
                    pending--;
                }
            }
        }
        if (pending != 0) {
            throw reject(PayloadRule.P_UNRESOLVED, "history");
        }
    }
}
