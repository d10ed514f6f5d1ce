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
    private final String unsupportedVersion;

    public PayloadRejectedException(PayloadRule rule, String location) {
        this(rule, location, null);
    }

    /**
     * P-VERSION because the payload's {@code version} names no format, or one not accepted: the
     * version text ({@code bounded}, escaped) is kept for {@link #unsupportedVersion()}.
     */
    static PayloadRejectedException unsupportedVersion(String bounded, String detail) {
        return new PayloadRejectedException(PayloadRule.P_VERSION, "version", detail, bounded);
    }

    /**
     * @param detail replaces the rule's reason in the message where the refusal must name what it
     *     refused (P-VERSION: the version text, escaped and bounded); null for the reason
     */
    public PayloadRejectedException(PayloadRule rule, String location, String detail) {
        this(rule, location, detail, null);
    }

    private PayloadRejectedException(PayloadRule rule, String location, String detail, String unsupportedVersion) {
        super(rule.id() + ": " + (detail == null ? rule.reason() : detail) + (location == null ? "" : " (at " + location + ")"),
                null, false, false);
        this.rule = rule;
        this.location = location;
        this.reason = detail == null ? rule.reason() : detail;
        this.unsupportedVersion = unsupportedVersion;
    }

    /**
     * The payload's version text (escaped, bounded) when the refusal is P-VERSION because that
     * version names no snapshot format or one the caller does not accept (a format question, not
     * a defect of the payload's shape); empty for every other refusal.
     */
    public java.util.Optional<String> unsupportedVersion() {
        return java.util.Optional.ofNullable(unsupportedVersion);
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
