package spice.authority.snapshot.payload;

/**
 * A payload broke a rule. Carries the rule id and, where useful, a location such as
 * {@code history[3].parts[1]}; never payload content. Stackless: thrown for untrusted input.
 */
public final class PayloadRejectedException extends Exception {
    private static final long serialVersionUID = 1L;
    private final PayloadRule rule;
    private final String location;

    public PayloadRejectedException(PayloadRule rule, String location) {
        super(rule.id() + ": " + rule.reason() + (location == null ? "" : " (at " + location + ")"), null, false, false);
        this.rule = rule;
        this.location = location;
    }

    public PayloadRule rule() {
        return rule;
    }

    /** Where in the payload the rule broke (e.g. {@code history[2].parts[0]}), or null. */
    public String location() {
        return location;
    }
}
