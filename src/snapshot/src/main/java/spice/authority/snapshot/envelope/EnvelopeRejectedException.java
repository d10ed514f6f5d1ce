package spice.authority.snapshot.envelope;

import spice.authority.snapshot.payload.PayloadRule;

/**
 * An envelope broke a structural or strictness rule. This is not a verification result: it says
 * nothing about authenticity and carries no key-dependent information. Stackless.
 */
public final class EnvelopeRejectedException extends Exception {
    private static final long serialVersionUID = 1L;
    private final EnvelopeRule rule;
    private final PayloadRule payloadRule;

    public EnvelopeRejectedException(EnvelopeRule rule) {
        this(rule, null);
    }

    public EnvelopeRejectedException(EnvelopeRule rule, PayloadRule payloadRule) {
        super(rule.id() + ": " + rule.reason() + (payloadRule == null ? "" : " (" + payloadRule.id() + ": " + payloadRule.reason() + ")"),
                null, false, false);
        this.rule = rule;
        this.payloadRule = payloadRule;
    }

    /**
     * A refusal whose message says what was refused instead of the rule's reason (E-FORMAT: the
     * format text, escaped and bounded by the caller).
     */
    static EnvelopeRejectedException naming(EnvelopeRule rule, String detail) {
        return new EnvelopeRejectedException(rule, detail, null);
    }

    private EnvelopeRejectedException(EnvelopeRule rule, String detail, Void unused) {
        super(rule.id() + ": " + detail, null, false, false);
        this.rule = rule;
        this.payloadRule = null;
    }

    public EnvelopeRule rule() {
        return rule;
    }

    /** For {@link EnvelopeRule#E_PAYLOAD}: the payload rule that broke; otherwise null. */
    public PayloadRule payloadRule() {
        return payloadRule;
    }
}
