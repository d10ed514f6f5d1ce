package spice.authority.os.windows;

/**
 * Whether a process runs as the helper's own user: the user SID of its token compared with ours.
 * Shared by the TCP peer check (which also takes the process's creation time, read through the
 * same handle as the SID) and the process watcher's same-user answer.
 *
 * <p><b>Guarantees.</b> Unknown is never "same user": a process or token that cannot be opened
 * or read, or a SID that does not parse, throws; only an equal SID answers {@link Owner#SAME}.
 *
 * <p>RACE: the answer is about whatever process holds the pid at the time of the call; callers
 * that bind it to a process confirm the start time afterwards (see {@code ProcessWatcher}).
 */
final class ProcessUsers {

    /** What the token of a pid said. */
    enum Owner {
        /** Its token user is our user. */
        SAME,
        /** Its token user is another SID. */
        OTHER,
        /** There is no such process. */
        GONE
    }

    /** Why the owner could not be established. */
    static final class UnknownOwnerException extends Exception {
        private static final long serialVersionUID = 1L;

        UnknownOwnerException(String message) {
            super(message, null, false, false);
        }
    }

    private final WindowsCalls calls;
    private final Sid user;

    ProcessUsers(WindowsCalls calls, Sid user) {
        this.calls = calls;
        this.user = user;
    }

    /**
     * The owner of whatever process holds {@code pid} now.
     *
     * @throws UnknownOwnerException when the process or its token cannot be read, or its SID does
     *     not parse
     */
    Owner owner(long pid) throws UnknownOwnerException {
        return identify(pid).owner();
    }

    /**
     * What the process holding {@code pid} is: its owner and its creation time, both read through
     * one handle of it ({@link WindowsCalls#processUser}), so they describe the same process.
     *
     * @return the owner, with the creation time (100 ns ticks since 1601 UTC; 0 when
     *     {@link Owner#GONE})
     * @throws UnknownOwnerException when the process or its token cannot be read, or its SID does
     *     not parse
     */
    Identity identify(long pid) throws UnknownOwnerException {
        if (pid <= 0 || pid > 0xFFFF_FFFFL) {
            return new Identity(Owner.GONE, 0);
        }
        WindowsCalls.ProcessUser p;
        try {
            p = calls.processUser((int) pid);
        } catch (WindowsException e) {
            throw new UnknownOwnerException("cannot read the user of process " + pid + " (" + e.getMessage() + ")");
        }
        if (p == null) {
            return new Identity(Owner.GONE, 0);
        }
        try {
            // SECURITY: compared as parsed SIDs, so trailing bytes or a wrong revision never match.
            return new Identity(Sid.fromBinary(p.userSid()).equals(user) ? Owner.SAME : Owner.OTHER, p.creationTime());
        } catch (MalformedDescriptorException e) {
            throw new UnknownOwnerException("the user SID of process " + pid + " does not parse");
        }
    }

    /** A process's owner and creation time (100 ns ticks since 1601 UTC), read from one handle. */
    record Identity(Owner owner, long creationTime) {}
}
