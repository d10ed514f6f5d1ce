package spice.authority.os.windows;

import spice.authority.os.DirectoryRefusedException;

/**
 * A broken {@link DaclRule}, before it is attached to a path component. Stackless and internal;
 * {@link #refusal} turns it into the SPI's typed refusal.
 */
final class RuleViolation extends Exception {

    private static final long serialVersionUID = 1L;

    private final DaclRule rule;
    private final String detail;

    RuleViolation(DaclRule rule, String detail) {
        super(rule.id() + ": " + detail, null, false, false);
        this.rule = rule;
        this.detail = detail;
    }

    DaclRule rule() {
        return rule;
    }

    String detail() {
        return detail;
    }

    /** The refusal of {@code component} under this rule; the message starts with the rule id. */
    DirectoryRefusedException refusal(String component) {
        return new DirectoryRefusedException(rule.category(), component, getMessage());
    }
}
