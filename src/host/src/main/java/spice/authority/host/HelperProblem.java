package spice.authority.host;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import spice.authority.snapshot.contract.ProblemCode;

/**
 * The helper refused a call with an RFC 9457 problem body ({@code application/problem+json}); one
 * subtype per stable {@code code} of the API, so a host can {@code switch} over them exhaustively.
 *
 * <p>Guarantees: the message is {@code <code>: <detail>} (plus {@code (rule R)} for
 * {@link InvalidSnapshot}) as the helper sent it, with the caller's session id replaced by
 * {@code <session>}; it never carries a token. Stackless: the helper's answer is the whole story.
 */
public abstract sealed class HelperProblem extends IOException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final String title;
    private final String detail;

    HelperProblem(Fields f) {
        super(f.code + ": " + f.detail + (f.rule == null ? "" : " (rule " + f.rule + ")"), null);
        this.status = f.status;
        this.code = f.code;
        this.title = f.title;
        this.detail = f.detail;
    }

    /** What the problem body said; {@code detail} already stripped of the session id. */
    record Fields(int status, String code, String title, String detail, String rule, Duration retryAfter) {}

    @Override
    public final synchronized Throwable fillInStackTrace() {
        return this;
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** The stable code, e.g. {@code busy}. */
    public String code() {
        return code;
    }

    /** The problem's title; may be empty. */
    public String title() {
        return title;
    }

    /** The helper's one-line detail. */
    public String detail() {
        return detail;
    }

    /**
     * True when the helper says nothing was written and the same call may simply be sent again
     * ({@code unavailable}; {@code cancelled}, except as the answer to a sign; {@code busy} with a
     * {@code Retry-After} or for a quota).
     */
    public boolean nothingHappened() {
        return false;
    }

    /** {@code signing}: the answer to a sign, whose {@code cancelled} may follow its write. */
    static HelperProblem of(Fields f, boolean signing) {
        ProblemCode code = ProblemCode.ofWire(f.code).orElse(null);
        if (code == null) {
            return new Unrecognized(f);
        }
        return switch (code) {
            case INVALID_REQUEST -> new InvalidRequest(f);
            case INVALID_SNAPSHOT -> new InvalidSnapshot(f);
            case VERIFICATION_FAILED -> new VerificationFailed(f);
            case UNSUPPORTED_FORMAT -> new UnsupportedFormat(f);
            case BUSY -> new Busy(f);
            case STATE_CONFLICT -> new StateConflict(f);
            case UNCERTAIN -> new Uncertain(f);
            case UNAVAILABLE -> new Unavailable(f);
            case CLOSING -> new Closing(f);
            case NOT_FOUND -> new NotFound(f);
            case UNAUTHORIZED -> new Unauthorized(f);
            case CANCELLED -> new Cancelled(f, signing);
        };
    }

    /** {@code invalid_request}: the call itself is malformed (a bad run ID, a missing session header). */
    public static final class InvalidRequest extends HelperProblem {
        private static final long serialVersionUID = 1L;

        InvalidRequest(Fields f) {
            super(f);
        }
    }

    /** {@code invalid_snapshot}: the payload or envelope broke a rule of the format, named by {@link #rule()}. */
    public static final class InvalidSnapshot extends HelperProblem {
        private static final long serialVersionUID = 1L;
        private final String rule;

        InvalidSnapshot(Fields f) {
            super(f);
            this.rule = f.rule == null ? "" : f.rule;
        }

        /** The rule id, e.g. {@code P-CALL-DUP}; empty when the helper named none. */
        public String rule() {
            return rule;
        }
    }

    /** {@code verification_failed}: the envelope does not verify here (one identical answer for every cause). */
    public static final class VerificationFailed extends HelperProblem {
        private static final long serialVersionUID = 1L;

        VerificationFailed(Fields f) {
            super(f);
        }
    }

    /**
     * {@code unsupported_format}: the payload, envelope or the run's record is in a snapshot format
     * this helper does not take (a format it does not know, or one its format policy refuses); the
     * detail names the format. Nothing was written; the same call will be refused again by this
     * helper (nothing converts a snapshot into another format: start a new run, or use a helper
     * that takes the format).
     */
    public static final class UnsupportedFormat extends HelperProblem {
        private static final long serialVersionUID = 1L;

        UnsupportedFormat(Fields f) {
            super(f);
        }
    }

    /**
     * {@code busy}: a lock is held by a live owner ({@code 409}: retrying will not help until it
     * stops), or a quota is reached ({@code 429}: nothing happened, retry later).
     */
    public static final class Busy extends HelperProblem {
        private static final long serialVersionUID = 1L;
        private final transient Duration retryAfter;

        Busy(Fields f) {
            super(f);
            this.retryAfter = f.retryAfter;
        }

        /** The helper's {@code Retry-After}, when it sent one: then nothing happened and a retry is invited. */
        public Optional<Duration> retryAfter() {
            return Optional.ofNullable(retryAfter);
        }

        /** A quota of the session, process or helper was reached ({@code 429}); nothing happened. */
        public boolean isQuota() {
            return status() == 429;
        }

        @Override
        public boolean nothingHappened() {
            return retryAfter != null || isQuota();
        }
    }

    /** {@code state_conflict}: the run is not in a state for this call, or the session does not own it. */
    public static final class StateConflict extends HelperProblem {
        private static final long serialVersionUID = 1L;

        StateConflict(Fields f) {
            super(f);
        }
    }

    /** {@code uncertain}: the outcome is unknown; the run is fenced. Never retried: the host must stop. */
    public static final class Uncertain extends HelperProblem {
        private static final long serialVersionUID = 1L;

        Uncertain(Fields f) {
            super(f);
        }
    }

    /** {@code unavailable}: nothing was written; the same call may be sent again. */
    public static final class Unavailable extends HelperProblem {
        private static final long serialVersionUID = 1L;

        Unavailable(Fields f) {
            super(f);
        }

        @Override
        public boolean nothingHappened() {
            return true;
        }
    }

    /**
     * {@code cancelled}: the helper gave up on the call (its deadline passed, or it was cancelled)
     * at or before its final check before the write: nothing was written, the run and its lease
     * are as they were, and the same call may be sent again. Except on a sign
     * ({@link #mayFollowWrite()}): there a helper may report cancellation after its signing write
     * (wire-format e.4), so the outcome is unknown.
     */
    public static final class Cancelled extends HelperProblem {
        private static final long serialVersionUID = 1L;

        private final boolean mayFollowWrite;

        /** {@code mayFollowWrite}: the answer to a sign, which wire-format e.4 lets come after the write. */
        Cancelled(Fields f, boolean mayFollowWrite) {
            super(f);
            this.mayFollowWrite = mayFollowWrite;
        }

        /**
         * True, except for the answer to a sign: a helper may report cancellation after its
         * signing write (wire-format e.4), so there the outcome is unknown; the identical payload,
         * sent again, gives a SUSPENDED run's envelope.
         */
        @Override
        public boolean nothingHappened() {
            return !mayFollowWrite;
        }

        /** True when this answers a sign: cancellation may have come after the signing write. */
        public boolean mayFollowWrite() {
            return mayFollowWrite;
        }
    }

    /** {@code closing}: the helper is shutting down. */
    public static final class Closing extends HelperProblem {
        private static final long serialVersionUID = 1L;

        Closing(Fields f) {
            super(f);
        }
    }

    /** {@code not_found}: no such run, session or import. */
    public static final class NotFound extends HelperProblem {
        private static final long serialVersionUID = 1L;

        NotFound(Fields f) {
            super(f);
        }
    }

    /** {@code unauthorized}: wrong peer user or bearer token. */
    public static final class Unauthorized extends HelperProblem {
        private static final long serialVersionUID = 1L;

        Unauthorized(Fields f) {
            super(f);
        }
    }

    /** A code this client does not know (a newer helper); treated as a refusal with unknown effect. */
    public static final class Unrecognized extends HelperProblem {
        private static final long serialVersionUID = 1L;

        Unrecognized(Fields f) {
            super(f);
        }
    }
}
