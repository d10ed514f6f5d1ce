package spice.authority.app.api;

import spice.authority.snapshot.contract.ProblemCode;

/**
 * A refusal of the HTTP layer itself (not of the authority): becomes an RFC 9457 problem with a
 * stable code. Messages are one line and never carry secrets or payload content.
 */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final ProblemCode code;
    private final String rule;

    public ApiException(int status, ProblemCode code, String detail) {
        this(status, code, detail, null);
    }

    public ApiException(int status, ProblemCode code, String detail, String rule) {
        super(detail, null, false, false);
        this.status = status;
        this.code = code;
        this.rule = rule;
    }

    public int status() {
        return status;
    }

    public ProblemCode code() {
        return code;
    }

    /** For {@code invalid_snapshot}: the payload rule id, e.g. {@code P-CALL-DUP}. */
    public String rule() {
        return rule;
    }

    public static ApiException invalidRequest(String detail) {
        return new ApiException(400, ProblemCode.INVALID_REQUEST, detail);
    }

    public static ApiException notFound(String detail) {
        return new ApiException(404, ProblemCode.NOT_FOUND, detail);
    }

    public static ApiException unauthorized(String detail) {
        return new ApiException(401, ProblemCode.UNAUTHORIZED, detail);
    }

    public static ApiException notOwned(String detail) {
        return new ApiException(409, ProblemCode.STATE_CONFLICT, detail);
    }
}
