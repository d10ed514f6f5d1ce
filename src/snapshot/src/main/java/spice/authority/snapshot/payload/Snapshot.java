package spice.authority.snapshot.payload;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoJsonWriter;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.JsonSyntaxException;
import spice.authority.snapshot.json.SafeText;

/**
 * A validated, canonical snapshot payload of one of the {@link SnapshotFormat}s
 * ({@code spice.agent.snapshot/v1alpha2} or {@code /v1alpha3}), named by its {@code version}.
 *
 * <p><b>Guarantees.</b> An instance exists only if its payload passed every rule of
 * wire-format.md b.3–b.6 for its format (v1alpha3: with P-WORKSPACE, wire-format-v1alpha3.md
 * section 3) and this project's stricter rules (canonical bytes only, one run-ID rule).
 * {@link #canonicalBytes()} are exactly the bytes that were validated, byte-identical to the
 * reference encoder's output for this value. Instances are immutable and thread-safe.
 * {@link #toString()} never shows conversation content.
 */
public final class Snapshot {
    /**
     * The v1alpha2 wire string.
     *
     * @deprecated a snapshot's format is {@link #format()}; the formats are {@link SnapshotFormat}.
     *     Kept only until the modules outside snapshot use those.
     */
    @Deprecated(forRemoval = true)
    public static final String FORMAT = SnapshotFormat.V1ALPHA2.wire();
    /** Largest payload accepted (P-SIZE): 16 MiB. */
    public static final int MAX_PAYLOAD_BYTES = (int) PayloadRules.MAX_PAYLOAD;

    private final SnapshotFormat format;
    private final String runId;
    private final Definition definition;
    private final int completedTurns;
    private final List<Message> history;
    private final PlanIdentity planIdentity;
    private final List<String> seenInteractionIds;
    private final long lastSequence;
    private final LifecycleStatus status;
    private final byte[] canonical;

    /** Takes {@code s} apart as it converts it: the caller does not use it afterwards. */
    private Snapshot(Raw.Snapshot s, byte[] canonical) {
        this.format = s.format;
        this.runId = s.runId;
        this.definition = new Definition(s.definition.name, s.definition.model, (int) s.definition.maxTurns);
        this.completedTurns = (int) s.completedTurns;
        List<Message> msgs = new ArrayList<>(s.history.size());
        for (Raw.Message m : s.history.view()) {
            List<Part> parts = new ArrayList<>(m.parts.size());
            for (Raw.Part p : m.parts.view()) {
                parts.add(switch (p.kind) {
                    case "text" -> new Part.Text(p.text);
                    case "tool_call" -> new Part.ToolCall(p.name, p.callId, JsonValue.ofChecked(p.data));
                    case "tool_result" -> new Part.ToolResult(p.name, p.callId, JsonValue.ofChecked(p.data));
                    case "extension" -> new Part.Extension(p.namespace, JsonValue.ofChecked(p.data));
                    default -> throw new IllegalStateException("validated kind");
                });
            }
            msgs.add(new Message(m.id, Role.fromWire(m.role), parts));
            // Decode's raw tree is not used again: let each message's parts go once converted,
            // so a payload of many small parts is never held twice over (raw and converted).
            m.parts.resetToEmpty();
        }
        this.history = List.copyOf(msgs);
        this.planIdentity = new PlanIdentity(s.plan.compiledIdentities.view(), s.plan.snapshotCompatibilityIdentity,
                s.plan.workspaceFingerprint, s.plan.toolPlanId, s.plan.fingerprint);
        this.seenInteractionIds = List.copyOf(s.seenInteractionIds.view());
        this.lastSequence = s.lastSequence;
        this.status = LifecycleStatus.fromWire(s.status);
        this.canonical = canonical;
    }

    /**
     * Decodes and validates a payload of any {@link SnapshotFormat}, the one its {@code version}
     * names. The first broken rule is reported; {@code P-CANONICAL} only when no more specific rule
     * is broken. Oversized input is refused before it is parsed.
     *
     * @throws PayloadRejectedException with the rule id of the first broken rule
     */
    public static Snapshot decode(byte[] payload) throws PayloadRejectedException {
        return decode(payload, ALL, false);
    }

    private static final Set<SnapshotFormat> ALL = EnumSet.allOf(SnapshotFormat.class);

    /**
     * {@link #decode(byte[])} accepting only the formats in {@code accepted}: a payload whose
     * version names another format, or no format, is refused with P-VERSION naming its version.
     *
     * <p>Check order: P-SIZE, P-JSON, a type error if it is the first decoding error in document
     * order, then the first unknown member or type error (P-UNKNOWN, P-TYPE), P-TRAILING and the
     * rules of the format, P-VERSION first among them, as before. But an unaccepted version is
     * reported <b>in place of</b> an unknown member (and of a member the version does not have),
     * because the members depend on it: a v1alpha3 payload where only v1alpha2 is accepted, a
     * v1alpha2 payload that carries {@code workspace_fingerprint}, and an unknown version with an
     * unknown member are all version problems (P-VERSION, naming the version), not P-UNKNOWN.
     *
     * @throws PayloadRejectedException with the rule id of the first broken rule
     */
    public static Snapshot decode(byte[] payload, Set<SnapshotFormat> accepted) throws PayloadRejectedException {
        return decode(payload, Set.copyOf(accepted), false);
    }

    /**
     * @param runIdRepaired the encoder already replaced an unpaired surrogate in the run ID (a
     *     builder's input): the bytes then say U+FFFD, which is not the run ID the caller gave
     */
    private static Snapshot decode(byte[] payload, Set<SnapshotFormat> accepted, boolean runIdRepaired)
            throws PayloadRejectedException {
        if (payload.length == 0 || payload.length > MAX_PAYLOAD_BYTES) {
            throw new PayloadRejectedException(PayloadRule.P_SIZE, null);
        }
        byte[] input = payload.clone(); // the caller may reuse its array
        Raw.Snapshot raw = decodeRaw(input, accepted);
        raw.runIdSubstituted |= runIdRepaired;
        PayloadRules.check(raw);
        // SECURITY: the canonical form is compared with the input as it is written, never built in
        // full: escapes the reference writes (<, >, &, U+2028, invalid UTF-8) would otherwise grow
        // a payload within its size limit several times over before it is refused.
        try {
            GoJsonWriter canonical = PayloadEncoder.encode(raw, GoJsonWriter.comparingWith(input));
            if (!canonical.contentEquals(input)) {
                throw new PayloadRejectedException(PayloadRule.P_CANONICAL, null);
            }
        } catch (GoJsonWriter.Mismatch e) {
            throw new PayloadRejectedException(PayloadRule.P_CANONICAL, null);
        }
        return new Snapshot(raw, input);
    }

    /**
     * P-JSON; a type error first in document order; P-VERSION when there is an unknown member or
     * a member the version lacks; P-UNKNOWN/P-TYPE (first in document order, a type error in
     * {@code workspace_fingerprint} counting only for a format that has the member); P-TRAILING;
     * P-VERSION.
     */
    private static Raw.Snapshot decodeRaw(byte[] input, Set<SnapshotFormat> accepted) throws PayloadRejectedException {
        PayloadDecoder d = new PayloadDecoder(input);
        Raw.Snapshot raw;
        try {
            raw = d.decode();
        } catch (JsonSyntaxException e) {
            throw new PayloadRejectedException(PayloadRule.P_JSON, "byte " + e.offset());
        }
        // A type error outside the workspace member is one in every format: it keeps its place.
        if (d.savedFirst() && d.savedRule() == PayloadRule.P_TYPE) {
            throw new PayloadRejectedException(d.savedRule(), d.savedLocation());
        }
        SnapshotFormat format = SnapshotFormat.fromWire(raw.version).orElse(null);
        PayloadRejectedException versionProblem = null;
        if (format == null || !accepted.contains(format)) {
            versionProblem = PayloadRejectedException.unsupportedVersion(SafeText.bounded(raw.version, 64), "version \""
                    + SafeText.bounded(raw.version, 64) + "\" is not " + (format == null ? "a snapshot format" : "accepted here")
                    + " (accepted: " + wires(accepted) + ")");
        } else if (!format.hasWorkspaceFingerprint() && raw.plan.workspacePresent) {
            versionProblem = new PayloadRejectedException(PayloadRule.P_VERSION, "version", "version \"" + format.wire()
                    + "\" has no plan_identity.workspace_fingerprint (a member of a later format)");
        }
        if (versionProblem != null && (d.savedRule() != null || raw.plan.workspacePresent)) {
            throw versionProblem; // the members depend on the version: it is named first
        }
        if (versionProblem == null && format.hasWorkspaceFingerprint() && d.workspaceRule() != null && !d.savedFirst()) {
            throw new PayloadRejectedException(d.workspaceRule(), "plan_identity.workspace_fingerprint");
        }
        if (d.savedRule() != null) {
            throw new PayloadRejectedException(d.savedRule(), d.savedLocation());
        }
        GoJsonReader r = d.reader();
        r.skipWhitespace();
        if (!r.atEnd()) {
            throw new PayloadRejectedException(PayloadRule.P_TRAILING, "byte " + r.position());
        }
        if (versionProblem != null) {
            throw versionProblem; // rule 1 (wire-format.md b.5)
        }
        raw.format = format;
        return raw;
    }

    /** Wire strings of {@code formats}, in enum order, comma-separated (for refusals). */
    private static String wires(Set<SnapshotFormat> formats) {
        StringBuilder b = new StringBuilder();
        for (SnapshotFormat f : SnapshotFormat.values()) {
            if (formats.contains(f)) {
                b.append(b.isEmpty() ? "" : ", ").append(f.wire());
            }
        }
        return b.isEmpty() ? "none" : b.toString();
    }

    /** The format the payload's version names. */
    public SnapshotFormat format() {
        return format;
    }

    /**
     * The plan's workspace fingerprint ({@code sha256:} + 64 hex, or {@code ""}); always {@code ""}
     * for v1alpha2.
     */
    public String workspaceFingerprint() {
        return planIdentity.workspaceFingerprint();
    }

    public String runId() {
        return runId;
    }

    public Definition definition() {
        return definition;
    }

    public int completedTurns() {
        return completedTurns;
    }

    public List<Message> history() {
        return history;
    }

    public PlanIdentity planIdentity() {
        return planIdentity;
    }

    public List<String> seenInteractionIds() {
        return seenInteractionIds;
    }

    /** The last committed event sequence, unsigned (1..2^64−2). */
    public long lastSequence() {
        return lastSequence;
    }

    public LifecycleStatus status() {
        return status;
    }

    /** A copy of the canonical payload bytes (what is signed and transported). */
    public byte[] canonicalBytes() {
        return canonical.clone();
    }

    /** Length of the canonical payload in bytes. */
    public int canonicalLength() {
        return canonical.length;
    }

    /** Identity and counts only: conversation content is application data and never printed. */
    @Override
    public String toString() {
        return "Snapshot[format=" + format.wire() + ", run_id=" + runId + ", status=" + status.wire() + ", last_sequence="
                + Long.toUnsignedString(lastSequence) + ", completed_turns=" + completedTurns
                + ", messages=" + history.size() + ", bytes=" + canonical.length + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Snapshot s && java.util.Arrays.equals(canonical, s.canonical);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(canonical);
    }

    /** Starts a builder for hosts that assemble a snapshot in Java. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Assembles a snapshot from typed values. {@link #build()} encodes canonically and then runs
     * the full decoder, so a built snapshot obeys exactly the same rules as a received one.
     */
    public static final class Builder {
        private final Raw.Snapshot raw = new Raw.Snapshot();

        private Builder() {
            format(SnapshotFormat.V1ALPHA2);
        }

        /** The format to build (default v1alpha2): the payload's version and shape. */
        public Builder format(SnapshotFormat format) {
            raw.format = Objects.requireNonNull(format);
            raw.version = format.wire();
            return this;
        }

        public Builder runId(String runId) {
            raw.runId = Objects.requireNonNull(runId);
            return this;
        }

        public Builder definition(Definition d) {
            raw.definition.name = d.name();
            raw.definition.model = d.model();
            raw.definition.maxTurns = Integer.toUnsignedLong(d.maxTurns());
            return this;
        }

        public Builder completedTurns(int turns) {
            raw.completedTurns = Integer.toUnsignedLong(turns);
            return this;
        }

        public Builder addMessage(Message m) {
            Raw.Message rm = new Raw.Message();
            rm.id = m.id();
            rm.role = m.role().wire();
            for (Part p : m.parts()) {
                Raw.Part rp = new Raw.Part();
                rp.kind = p.kind();
                switch (p) {
                    case Part.Text t -> rp.text = t.text();
                    case Part.ToolCall c -> {
                        rp.name = c.name();
                        rp.callId = c.callId();
                        rp.data = c.data().rawUnsafe();
                    }
                    case Part.ToolResult c -> {
                        rp.name = c.name();
                        rp.callId = c.callId();
                        rp.data = c.data().rawUnsafe();
                    }
                    case Part.Extension e -> {
                        rp.namespace = e.namespace();
                        rp.data = e.data().rawUnsafe();
                    }
                }
                rm.parts.backing.add(rp);
                rm.parts.len++;
            }
            raw.history.backing.add(rm);
            raw.history.len++;
            return this;
        }

        public Builder planIdentity(PlanIdentity p) {
            raw.plan.compiledIdentities.resetToEmpty();
            raw.plan.compiledIdentities.backing.addAll(p.compiledIdentities());
            raw.plan.compiledIdentities.len = p.compiledIdentities().size();
            raw.plan.snapshotCompatibilityIdentity = p.snapshotCompatibilityIdentity();
            raw.plan.workspaceFingerprint = p.workspaceFingerprint();
            raw.plan.toolPlanId = p.toolPlanId();
            raw.plan.fingerprint = p.fingerprint();
            return this;
        }

        public Builder seenInteractionIds(List<String> ids) {
            raw.seenInteractionIds.resetToEmpty();
            raw.seenInteractionIds.backing.addAll(ids);
            raw.seenInteractionIds.len = ids.size();
            return this;
        }

        /** Unsigned last committed sequence. */
        public Builder lastSequence(long seq) {
            raw.lastSequence = seq;
            return this;
        }

        public Builder status(LifecycleStatus status) {
            raw.status = status.wire();
            return this;
        }

        /**
         * Encodes and validates.
         *
         * @throws PayloadRejectedException with the first broken rule
         */
        public Snapshot build() throws PayloadRejectedException {
            // SECURITY: a format without the member would drop the workspace silently.
            if (!raw.format.hasWorkspaceFingerprint() && !raw.plan.workspaceFingerprint.isEmpty()) {
                throw new PayloadRejectedException(PayloadRule.P_VERSION, "version", "version \"" + raw.format.wire()
                        + "\" has no plan_identity.workspace_fingerprint (a member of a later format)");
            }
            byte[] bytes = PayloadEncoder.encode(raw, 4096).toByteArray();
            // SECURITY: the encoder writes an unpaired surrogate as U+FFFD; the run ID signed would
            // then differ from the one given. P-RUNID refuses it, in the rules' order.
            return decode(bytes, Set.of(raw.format), !GoText.isValidUnicode(raw.runId));
        }
    }
}
