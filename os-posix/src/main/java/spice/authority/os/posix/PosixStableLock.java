package spice.authority.os.posix;

import spice.authority.os.FileIdentity;
import spice.authority.os.StableLock;

/** A held {@code flock(LOCK_EX)} on its own open file description. */
final class PosixStableLock implements StableLock {

    private final Syscalls sys;
    private final String name;
    private final FileIdentity identity;
    private int fd; // guarded by this; -1 once released

    PosixStableLock(Syscalls sys, String name, int fd, FileIdentity identity) {
        this.sys = sys;
        this.name = name;
        this.fd = fd;
        this.identity = identity;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public FileIdentity identity() {
        return identity;
    }

    @Override
    public synchronized void close() {
        if (fd < 0) {
            return;
        }
        int toClose = fd;
        fd = -1;
        try {
            sys.flock(toClose, Libc.P.LOCK_UN);
        } catch (PosixException ignored) {
            // closing the last descriptor of the open file description releases the lock anyway
        }
        sys.closeQuietly(toClose);
    }

    @Override
    public String toString() {
        return "PosixStableLock[" + name + ", " + identity + "]";
    }
}
