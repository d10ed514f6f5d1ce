package spice.authority.snapshot.payload;

/**
 * A payload broke a rule. Carries the rule id and, where useful, a location such as
 * {@code history[3].parts[1]}; never payload content. Stackless: thrown for untrusted input.
 */
public final class PayloadRejectedException extends Exception {
    private static final long serialVersionUID = 1L;
    private final PayloadRule rule;
    private final String location;
    private final String reason;

    public PayloadRejectedException(PayloadRule rule, String location) {
        this(rule, location, null);
    }

    /**
     * @param detail replaces the rule's reason in the message where the refusal must name what it
     *     refused (P-VERSION: the version text, escaped and bounded); null for the reason
     */
    public PayloadRejectedException(PayloadRule rule, String location, String detail) {
        super(rule.id() + ": " + (detail == null ? rule.reason() : detail) + (location == null ? "" : " (at " + location + ")"),
                null, false, false);
        this.rule = rule;
        this.location = location;
        this.reason = detail == null ? rule.reason() : detail;
    }

    public PayloadRule rule() {
        return rule;
    }

    /**
     * Why, for display: the rule's reason, or what was refused where the rule names it (P-VERSION:
     * the version text, escaped and bounded).
     */
    public String reason() {
        return reason;
    }

    /** Where in the payload the rule broke (e.g. {@code history[2].parts[0]}), or null. */
    public String location() {
        return location;
    }
}
