package spice.authority.snapshot.payload;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.GoJsonWriter;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.json.JsonSyntaxException;

/**
 * A validated, canonical {@code spice.agent.snapshot/v1alpha2} payload.
 *
 * <p><b>Guarantees.</b> An instance exists only if its payload passed every rule of
 * wire-format.md b.3–b.6 and this project's stricter rules (canonical bytes only, one run-ID rule).
 * {@link #canonicalBytes()} are exactly the bytes that were validated, byte-identical to the
 * reference encoder's output for this value. Instances are immutable and thread-safe.
 * {@link #toString()} never shows conversation content.
 */
public final class Snapshot {
    /** The payload format string. */
    public static final String FORMAT = PayloadRules.FORMAT;
    /** Largest payload accepted (P-SIZE): 16 MiB. */
    public static final int MAX_PAYLOAD_BYTES = (int) PayloadRules.MAX_PAYLOAD;

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
                s.plan.toolPlanId, s.plan.fingerprint);
        this.seenInteractionIds = List.copyOf(s.seenInteractionIds.view());
        this.lastSequence = s.lastSequence;
        this.status = LifecycleStatus.fromWire(s.status);
        this.canonical = canonical;
    }

    /**
     * Decodes and validates a payload. The first broken rule is reported; {@code P-CANONICAL} only
     * when no more specific rule is broken. Oversized input is refused before it is parsed.
     *
     * @throws PayloadRejectedException with the rule id of the first broken rule
     */
    public static Snapshot decode(byte[] payload) throws PayloadRejectedException {
        return decode(payload, false);
    }

    /**
     * @param runIdRepaired the encoder already replaced an unpaired surrogate in the run ID (a
     *     builder's input): the bytes then say U+FFFD, which is not the run ID the caller gave
     */
    private static Snapshot decode(byte[] payload, boolean runIdRepaired) throws PayloadRejectedException {
        if (payload.length == 0 || payload.length > MAX_PAYLOAD_BYTES) {
            throw new PayloadRejectedException(PayloadRule.P_SIZE, null);
        }
        byte[] input = payload.clone(); // the caller may reuse its array
        Raw.Snapshot raw = decodeRaw(input);
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

    /** P-JSON, then P-UNKNOWN/P-TYPE (first in document order), then P-TRAILING. */
    private static Raw.Snapshot decodeRaw(byte[] input) throws PayloadRejectedException {
        PayloadDecoder d = new PayloadDecoder(input);
        Raw.Snapshot raw;
        try {
            raw = d.decode();
        } catch (JsonSyntaxException e) {
            throw new PayloadRejectedException(PayloadRule.P_JSON, "byte " + e.offset());
        }
        if (d.savedRule() != null) {
            throw new PayloadRejectedException(d.savedRule(), d.savedLocation());
        }
        GoJsonReader r = d.reader();
        r.skipWhitespace();
        if (!r.atEnd()) {
            throw new PayloadRejectedException(PayloadRule.P_TRAILING, "byte " + r.position());
        }
        return raw;
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
        return "Snapshot[run_id=" + runId + ", status=" + status.wire() + ", last_sequence="
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
            raw.version = FORMAT;
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
            byte[] bytes = PayloadEncoder.encode(raw, 4096).toByteArray();
            // SECURITY: the encoder writes an unpaired surrogate as U+FFFD; the run ID signed would
            // then differ from the one given. P-RUNID refuses it, in the rules' order.
            return decode(bytes, !GoText.isValidUnicode(raw.runId));
        }
    }
}
