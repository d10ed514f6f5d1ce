package spice.authority.core;

import spice.authority.snapshot.contract.ProblemCode;

/**
 * The failure classes of the run authority (wire-format.md e.5), as a sealed set. Messages are
 * one line for the local user and name run IDs and causes, never key material, MACs or payload
 * content. Stackless: these are expected outcomes, not bugs.
 *
 * <ul>
 *   <li>{@link Configuration}: a bad argument (invalid run ID for Start, bad directory argument).
 *   <li>{@link Unavailable}: storage or security failure; retry may help once the cause is fixed.
 *   <li>{@link Busy}: the run is owned by a live process (or shutdown waits for leases).
 *   <li>{@link State}: an illegal transition for the run's durable phase or the object's state.
 *   <li>{@link Verification}: any authenticity mismatch; always the same message.
 *   <li>{@link UnsupportedFormat}: an envelope, payload or record in a snapshot format this helper
 *       does not take (unknown, or refused by its format policy); names the format, which is
 *       public. Nothing was written.
 *   <li>{@link Uncertain}: the outcome of a write is unknown; never retry automatically.
 *   <li>{@link Closed}: the authority is closing or closed, or the object is finished.
 *   <li>{@link Cancelled}: cancellation proven before the writer ran; nothing changed, retryable.
 * </ul>
 */
public abstract sealed class AuthorityException extends Exception {
    private static final long serialVersionUID = 1L;

    AuthorityException(String message) {
        super(message, null, false, false);
    }

    /** The stable problem code of this failure class. */
    public abstract ProblemCode problem();

    /** The stable code as sent on the wire, e.g. {@code busy} or {@code verification_failed}. */
    public final String code() {
        return problem().wire();
    }

    /** Whether the same call may be retried as is (nothing durable changed). */
    public boolean retryable() {
        return false;
    }

    public static final class Configuration extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public Configuration(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.INVALID_REQUEST;
        }
    }

    public static final class Unavailable extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public Unavailable(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.UNAVAILABLE;
        }

        @Override
        public boolean retryable() {
            return true;
        }
    }

    public static final class Busy extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public Busy(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.BUSY;
        }

        @Override
        public boolean retryable() {
            return true;
        }
    }

    public static final class State extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public State(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.STATE_CONFLICT;
        }
    }

    /** One message for every verification failure, by design (wire-format.md c.3). */
    public static final class Verification extends AuthorityException {
        private static final long serialVersionUID = 1L;
        public static final String MESSAGE = spice.authority.snapshot.crypto.VerificationException.MESSAGE;

        public Verification() {
            super(MESSAGE);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.VERIFICATION_FAILED;
        }
    }

    /**
     * A snapshot format this helper does not take for the use asked (unknown text, or refused by
     * its {@link spice.authority.snapshot.FormatPolicy}). The message names the format: it is
     * public, unlike anything a verification failure could tell. Nothing was written.
     */
    public static final class UnsupportedFormat extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public UnsupportedFormat(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.UNSUPPORTED_FORMAT;
        }
    }

    public static final class Uncertain extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public Uncertain(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.UNCERTAIN;
        }
    }

    public static final class Closed extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public Closed(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.CLOSING;
        }
    }

    public static final class Cancelled extends AuthorityException {
        private static final long serialVersionUID = 1L;

        public Cancelled(String message) {
            super(message);
        }

        @Override
        public ProblemCode problem() {
            return ProblemCode.CANCELLED;
        }

        @Override
        public boolean retryable() {
            return true;
        }
    }
}
