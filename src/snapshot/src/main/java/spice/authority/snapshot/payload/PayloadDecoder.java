package spice.authority.snapshot.payload;

import java.util.function.Supplier;
import spice.authority.snapshot.json.GoFieldNames;
import spice.authority.snapshot.json.GoJsonReader;

/**
 * Decodes a payload into {@link Raw} with the semantics of the reference's streaming decoder
 * (wire-format.md b.3): unknown members rejected at every level (P-UNKNOWN), names matched exactly
 * and then case-insensitively with Unicode simple folding, type mismatches rejected (P-TYPE),
 * later duplicates win and objects merge into earlier values, {@code null} keeps the earlier value
 * (or empties a list), {@code data} keeps its exact raw bytes.
 *
 * <p>Like Go, the first P-UNKNOWN/P-TYPE error is remembered and decoding continues, so a syntax
 * error anywhere in the value (P-JSON) takes precedence.
 *
 * <p>One shape serves both formats: v1alpha3's {@code plan_identity.workspace_fingerprint} is
 * decoded wherever it appears, and a type error inside it is remembered apart from the others
 * ({@link #workspaceRule()}), because whether it counts depends on the version, which is known
 * only once the whole value is read (Snapshot sorts this out).
 */
final class PayloadDecoder {
    private static final String[] SNAPSHOT_FIELDS = {
        "version", "run_id", "definition", "completed_turns", "history", "plan_identity",
        "seen_interaction_ids", "last_sequence", "status"};
    private static final String[] DEFINITION_FIELDS = {"name", "model", "max_turns"};
    private static final String[] MESSAGE_FIELDS = {"id", "role", "parts"};
    private static final String[] PART_FIELDS = {"kind", "text", "name", "call_id", "namespace", "data"};
    /** Both formats' plan members: v1alpha3's {@code workspace_fingerprint} is sorted out after decoding. */
    private static final String[] PLAN_FIELDS = {
        "compiled_identities", "snapshot_compatibility_identity", "tool_plan_id", "fingerprint",
        "workspace_fingerprint"};

    private static final long MAX_U32 = 0xFFFF_FFFFL;

    private final GoJsonReader r;
    private PayloadRule saved;
    private String savedAt;
    private int savedOrder;
    private PayloadRule workspaceSaved;
    private int workspaceOrder;
    private boolean inWorkspace;
    private int errors;

    PayloadDecoder(byte[] payload) {
        this.r = new GoJsonReader(payload);
    }

    /** First remembered P-UNKNOWN/P-TYPE error, or null. */
    PayloadRule savedRule() {
        return saved;
    }

    String savedLocation() {
        return savedAt;
    }

    /** First type error inside a {@code workspace_fingerprint} member, or null. */
    PayloadRule workspaceRule() {
        return workspaceSaved;
    }

    /** Whether the first error outside the workspace member came before the first inside it. */
    boolean savedFirst() {
        return saved != null && (workspaceSaved == null || savedOrder < workspaceOrder);
    }

    GoJsonReader reader() {
        return r;
    }

    // Current indices, used to render location templates only when an error is saved, so the
    // hot path builds no strings: %m = message, %p = part, %i = list element.
    private int curMessage;
    private int curPart;
    private int curElement;

    private void save(PayloadRule rule, String where) {
        errors++;
        if (inWorkspace) {
            if (workspaceSaved == null) {
                workspaceSaved = rule;
                workspaceOrder = errors;
            }
            return;
        }
        if (saved == null) {
            savedOrder = errors;
            saved = rule;
            savedAt = where.replace("%m", Integer.toString(curMessage))
                    .replace("%p", Integer.toString(curPart))
                    .replace("%i", Integer.toString(curElement));
        }
    }

    private void typeMismatch(String where) {
        save(PayloadRule.P_TYPE, where);
        r.skipValue();
    }

    static int match(String key, String[] fields) {
        return GoFieldNames.match(key, fields);
    }

    // ---- typed value decoders; each consumes exactly one value ------------------------------

    /** The values every message and part repeats, held once: a payload of many small parts keeps no copy each. */
    private static final String[] ROLES = {"user", "assistant", "tool", "system"};
    private static final String[] KINDS = {"text", "tool_call", "tool_result", "extension"};

    private static String known(String s, String[] values) {
        for (String v : values) {
            if (v.equals(s)) {
                return v;
            }
        }
        return s;
    }

    private String string(String current, String where) {
        int kind = r.peekKind();
        if (kind == '"') {
            return r.readString();
        }
        if (kind == 'n') {
            r.readNull();
            return current;
        }
        typeMismatch(where);
        return current;
    }

    private long unsigned(long current, long max, String where) {
        int kind = r.peekKind();
        if (kind == '0') {
            long v = r.readNumberAsUnsigned();
            if (!r.lastNumberWasUnsigned() || Long.compareUnsigned(v, max) > 0) {
                save(PayloadRule.P_TYPE, where);
                return current;
            }
            return v;
        }
        if (kind == 'n') {
            r.readNull();
            return current;
        }
        typeMismatch(where);
        return current;
    }

    /** Returns true when an object follows and has been opened. */
    private boolean openObject(String where) {
        int kind = r.peekKind();
        if (kind == '{') {
            r.beginObject();
            return true;
        }
        if (kind == 'n') {
            r.readNull();
            return false;
        }
        typeMismatch(where);
        return false;
    }

    private interface ElementDecoder<T> {
        T decode(T current, int index);
    }

    /** Called for each element decoded beyond the retention limit. */
    private interface OverflowCheck<T> {
        void check(Raw.Slice<T> slice, T element, int index);
    }

    /**
     * Go's array-into-slice decoding, with element reuse up to the slice's capacity. Elements past
     * {@code retain} are decoded into a fresh scratch value, checked by {@code onOverflow} and
     * dropped (they only count): the array already breaks its count rule, and this keeps the
     * memory used proportional to what a valid payload can hold.
     */
    private <T> void slice(Raw.Slice<T> s, Supplier<T> zero, ElementDecoder<T> element, String where, int retain,
                           OverflowCheck<T> onOverflow, java.util.function.UnaryOperator<T> reset) {
        int kind = r.peekKind();
        if (kind == 'n') {
            r.readNull();
            s.resetToEmpty();
            return;
        }
        if (kind != '[') {
            typeMismatch(where);
            return;
        }
        r.beginArray();
        s.clearOverflow();
        T scratch = null;
        int i = 0;
        boolean first = true;
        while (r.nextElement(first)) {
            first = false;
            curElement = i;
            if (i < retain) {
                if (i >= s.backing.size()) {
                    s.backing.add(zero.get());
                }
                if (i >= s.len) {
                    s.len = i + 1;
                }
                s.backing.set(i, element.decode(s.backing.get(i), i));
            } else {
                // One scratch element, reset each time: overflow costs no allocation per element.
                scratch = scratch == null || reset == null ? zero.get() : reset.apply(scratch);
                scratch = element.decode(scratch, i);
                s.overflow++;
                if (onOverflow != null) {
                    onOverflow.check(s, scratch, i);
                }
            }
            i++;
        }
        int retained = Math.min(i, retain);
        if (retained < s.len) {
            s.len = retained;
        }
        if (i == 0) {
            s.resetToEmpty();
        }
    }

    // Allocated once per decoder, not per message.
    private final ElementDecoder<Raw.Message> messageDecoder = this::message;
    private final ElementDecoder<Raw.Part> partDecoder = this::part;
    private final OverflowCheck<Raw.Part> partOverflow = this::partOverflow;

    private static void messageOverflow(Raw.Slice<Raw.Message> s, Raw.Message m, int index) {
        if (s.overflowFailure == null) {
            try {
                PayloadRules.checkMessage(m, index);
            } catch (PayloadRejectedException e) {
                s.overflowFailure = e;
            }
        }
    }

    private void partOverflow(Raw.Slice<Raw.Part> s, Raw.Part p, int index) {
        if (s.overflowFailure == null) {
            try {
                PayloadRules.checkPart(p, curMessage, index);
            } catch (PayloadRejectedException e) {
                s.overflowFailure = e;
            }
        }
        s.overflowBytes += PayloadRules.partSize(p);
    }

    private void unknown(String where) {
        save(PayloadRule.P_UNKNOWN, where);
        r.skipValue();
    }

    // ---- the v1alpha2 and v1alpha3 shape ---------------------------------------------------------------

    Raw.Snapshot decode() {
        Raw.Snapshot s = new Raw.Snapshot();
        if (!openObject("$")) {
            return s;
        }
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            switch (match(key, SNAPSHOT_FIELDS)) {
                case 0 -> s.version = string(s.version, "version");
                case 1 -> runId(s);
                case 2 -> definition(s.definition);
                case 3 -> s.completedTurns = unsigned(s.completedTurns, MAX_U32, "completed_turns");
                case 4 -> slice(s.history, Raw.Message::new, messageDecoder, "history", PayloadRules.MAX_MESSAGES,
                        PayloadDecoder::messageOverflow, Raw.Message::reset);
                case 5 -> plan(s.plan);
                case 6 -> slice(s.seenInteractionIds, () -> "",
                        (cur, i) -> string(cur, "seen_interaction_ids[%i]"), "seen_interaction_ids",
                        PayloadRules.MAX_INTERACTIONS, null, null);
                case 7 -> s.lastSequence = unsigned(s.lastSequence, -1L, "last_sequence");
                case 8 -> s.status = string(s.status, "status");
                default -> unknown("$");
            }
        }
        return s;
    }

    /** run_id, remembering whether the reader substituted U+FFFD in it (P-RUNID refuses that). */
    private void runId(Raw.Snapshot s) {
        if (r.peekKind() == '"') {
            s.runId = r.readString();
            s.runIdSubstituted = r.lastStringSubstituted(); // a later duplicate wins, with its own flag
        } else {
            s.runId = string(s.runId, "run_id"); // null keeps the earlier value and its flag
        }
    }

    private void definition(Raw.Definition d) {
        if (!openObject("definition")) {
            return;
        }
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            switch (match(key, DEFINITION_FIELDS)) {
                case 0 -> d.name = string(d.name, "definition.name");
                case 1 -> d.model = string(d.model, "definition.model");
                case 2 -> d.maxTurns = unsigned(d.maxTurns, MAX_U32, "definition.max_turns");
                default -> unknown("definition");
            }
        }
    }

    private Raw.Message message(Raw.Message m, int index) {
        curMessage = index;
        if (!openObject("history[%m]")) {
            return m;
        }
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            switch (match(key, MESSAGE_FIELDS)) {
                case 0 -> m.id = string(m.id, "history[%m].id");
                case 1 -> m.role = known(string(m.role, "history[%m].role"), ROLES);
                case 2 -> {
                    slice(m.parts, Raw.Part::new, partDecoder, "history[%m].parts", PayloadRules.MAX_PARTS, partOverflow,
                            Raw.Part::reset);
                    curMessage = index;
                }
                default -> unknown("history[%m]");
            }
        }
        return m;
    }

    private Raw.Part part(Raw.Part p, int pi) {
        curPart = pi;
        if (!openObject("history[%m].parts[%p]")) {
            return p;
        }
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            int f = match(key, PART_FIELDS);
            if (f == 5) {
                // json.RawMessage: any value, exact bytes (null becomes the four bytes "null").
                p.data = r.readRawValue();
                continue;
            }
            switch (f) {
                case 0 -> p.kind = known(string(p.kind, "history[%m].parts[%p].kind"), KINDS);
                case 1 -> p.text = string(p.text, "history[%m].parts[%p].text");
                case 2 -> p.name = string(p.name, "history[%m].parts[%p].name");
                case 3 -> p.callId = string(p.callId, "history[%m].parts[%p].call_id");
                case 4 -> p.namespace = string(p.namespace, "history[%m].parts[%p].namespace");
                default -> unknown("history[%m].parts[%p]");
            }
        }
        return p;
    }

    private void plan(Raw.Plan p) {
        if (!openObject("plan_identity")) {
            return;
        }
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            switch (match(key, PLAN_FIELDS)) {
                case 0 -> slice(p.compiledIdentities, () -> "",
                        (cur, i) -> string(cur, "plan_identity.compiled_identities[%i]"),
                        "plan_identity.compiled_identities", PayloadRules.MAX_COMPILED, null, null);
                case 1 -> p.snapshotCompatibilityIdentity = string(p.snapshotCompatibilityIdentity,
                        "plan_identity.snapshot_compatibility_identity");
                case 2 -> p.toolPlanId = string(p.toolPlanId, "plan_identity.tool_plan_id");
                case 3 -> p.fingerprint = string(p.fingerprint, "plan_identity.fingerprint");
                case 4 -> {
                    p.workspacePresent = true;
                    inWorkspace = true;
                    p.workspaceFingerprint = string(p.workspaceFingerprint, "plan_identity.workspace_fingerprint");
                    inWorkspace = false;
                }
                default -> unknown("plan_identity");
            }
        }
    }
}
