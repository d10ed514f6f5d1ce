package spice.authority.os;

/**
 * Thrown when a process cannot be watched at all: the kernel lacks the facility (for example
 * Linux before 5.3, or a seccomp filter that refuses {@code pidfd_open}), or the helper has
 * run out of descriptors. A process that is merely gone is not a failure: its watch fires at
 * once instead.
 *
 * <p>The message is one line for logs; the low-level cause (an errno) is part of the message,
 * never a chained cause.
 */
public final class ProcessWatchException extends Exception {

    private static final long serialVersionUID = 1L;

    /** @param message what could not be watched and why */
    public ProcessWatchException(String message) {
        super(message, null, false, false);
    }
}
