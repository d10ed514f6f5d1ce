package spice.authority.os.windows;

/**
 * A security descriptor (or SID, or ACL) that cannot be parsed. Stackless and internal: the
 * directory turns it into one generic refusal ({@link DaclRule#SD_MALFORMED}); the reason is
 * kept for tests and never attached as a cause.
 */
final class MalformedDescriptorException extends Exception {

    private static final long serialVersionUID = 1L;

    MalformedDescriptorException(String reason) {
        super(reason, null, false, false);
    }

    /** Which structural check failed. */
    String reason() {
        return getMessage();
    }
}
