package spice.authority.snapshot.payload;

import spice.authority.snapshot.RunId;

/**
 * The payload rules of wire-format.md b.3–b.6, by their stable ids, plus this project's stricter
 * {@link #P_CANONICAL} (ARCHITECTURE.md, "stricter" point 1). {@link #P_RUNID} also carries the
 * stricter one-run-ID rule (point 3): it is exactly {@link RunId#isValid}.
 */
public enum PayloadRule {
    P_SIZE("P-SIZE", "payload length must be 1..16777216 bytes"),
    P_JSON("P-JSON", "payload is not one syntactically valid JSON value"),
    P_TRAILING("P-TRAILING", "data follows the JSON value"),
    P_UNKNOWN("P-UNKNOWN", "member outside the shape of the payload's format"),
    P_TYPE("P-TYPE", "member has the wrong JSON type or an integer out of range"),
    P_VERSION("P-VERSION", "version must name an accepted snapshot format"),
    P_MSG_ID("P-MSG-ID", "message id must be a token of at most 128 bytes"),
    P_PART_KIND("P-PART-KIND", "part kind must be text, tool_call, tool_result or extension"),
    P_PART_INACTIVE("P-PART-INACTIVE", "part carries a member its kind does not use"),
    P_TEXT("P-TEXT", "text must be non-empty and at most 1 MiB"),
    P_CALL_ID("P-CALL-ID", "call_id must be a token of at most 128 bytes"),
    P_TOOL_NAME("P-TOOL-NAME", "tool name must be a token of at most 128 bytes"),
    P_NAMESPACE("P-NAMESPACE", "extension namespace must be a token of at most 256 bytes"),
    P_DATA("P-DATA", "data must be present, one JSON value, at most 1 MiB"),
    P_MSG_ROLE("P-MSG-ROLE", "role must be system, user, assistant or tool"),
    P_MSG_PARTS("P-MSG-PARTS", "a message must have 1..128 parts"),
    P_MSG_SIZE("P-MSG-SIZE", "message exceeds 4 MiB"),
    P_DEF_NAME("P-DEF-NAME", "definition.name must be non-empty without surrounding white space"),
    P_DEF_MODEL("P-DEF-MODEL", "definition.model must be non-empty without surrounding white space"),
    P_DEF_TURNS("P-DEF-TURNS", "definition.max_turns must be 1..1000"),
    P_TOOLPLAN("P-TOOLPLAN", "tool_plan_id must be a token of at most 256 bytes without control or white-space characters"),
    P_PLAN_COUNT("P-PLAN-COUNT", "compiled_identities must hold 1..512 entries"),
    P_PLAN_SORTED("P-PLAN-SORTED", "compiled_identities must be sorted by UTF-8 bytes"),
    P_PLAN_TOKEN("P-PLAN-TOKEN", "compiled identity must be a token of at most 256 bytes"),
    P_PLAN_DUP("P-PLAN-DUP", "compiled identities must be unique"),
    P_PLAN_FORM("P-PLAN-FORM", "compiled identity must have the form category:name"),
    P_PLAN_CATEGORY("P-PLAN-CATEGORY", "compiled identity category must be provider, stage, observer, broker, tool or decorator"),
    P_COMPAT("P-COMPAT", "snapshot_compatibility_identity must be empty or a token of at most 256 bytes"),
    P_WORKSPACE("P-WORKSPACE", "workspace_fingerprint must be sha256: followed by 64 lowercase hex digits; "
            + "it may be empty only when snapshot_compatibility_identity is empty"),
    P_FPR("P-FPR", "fingerprint must be sha256: followed by 64 lowercase hex digits"),
    P_RUNID("P-RUNID", RunId.RULE),
    P_TURNS("P-TURNS", "completed_turns exceeds max_turns"),
    P_HIST_COUNT("P-HIST-COUNT", "history must hold 1..4096 messages"),
    P_SEQ("P-SEQ", "last_sequence must be 1..2^64-2"),
    P_STATUS("P-STATUS", "status must be suspended, completed, failed or cancelled"),
    P_SUSPENDED_TURNS("P-SUSPENDED-TURNS", "suspended requires 1 <= completed_turns <= max_turns-1"),
    P_IA_COUNT("P-IA-COUNT", "at most 4096 seen interaction IDs"),
    P_IA_TOKEN("P-IA-TOKEN", "interaction ID must be a token of at most 128 bytes"),
    P_IA_ORDER("P-IA-ORDER", "interaction IDs must be strictly ascending by UTF-8 bytes"),
    P_HIST_FIRST_USER("P-HIST-FIRST-USER", "the first message must have role user"),
    P_MSG_ID_DUP("P-MSG-ID-DUP", "message ids must be unique"),
    P_HIST_SIZE("P-HIST-SIZE", "history exceeds 16 MiB"),
    P_CALL_ROLE("P-CALL-ROLE", "tool_call parts are allowed only in assistant messages"),
    P_CALL_DUP("P-CALL-DUP", "tool call ids must be unique across the history"),
    P_RESULT_ROLE("P-RESULT-ROLE", "tool_result parts are allowed only in tool messages"),
    P_RESULT_MATCH("P-RESULT-MATCH", "tool_result must resolve an earlier unresolved call with the same call_id and name"),
    P_UNRESOLVED("P-UNRESOLVED", "a tool_call has no result"),
    P_CANONICAL("P-CANONICAL", "payload is not byte-identical to its canonical encoding");

    private final String id;
    private final String reason;

    PayloadRule(String id, String reason) {
        this.id = id;
        this.reason = reason;
    }

    /** The stable rule id, e.g. {@code P-CALL-DUP}. */
    public String id() {
        return id;
    }

    /** A short, content-free description of the rule. */
    public String reason() {
        return reason;
    }

    /** Looks a rule up by its id; throws for an unknown id. */
    public static PayloadRule byId(String id) {
        for (PayloadRule r : values()) {
            if (r.id.equals(id)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown payload rule id");
    }
}
