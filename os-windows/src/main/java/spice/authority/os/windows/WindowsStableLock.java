package spice.authority.os.windows;

import spice.authority.os.FileIdentity;
import spice.authority.os.StableLock;

/**
 * A held {@code LockFileEx} exclusive lock on byte 0 of a lock file, on its own handle (wire-format
 * d.7). Two handles conflict even within one process, as two {@code flock} descriptions do.
 *
 * <p>NOT RUN: never ran on Windows (README.md).
 */
final class WindowsStableLock implements StableLock {

    private final WindowsCalls calls;
    private final String name;
    private final FileIdentity identity;
    private long handle; // guarded by this; 0 once released

    WindowsStableLock(WindowsCalls calls, String name, long handle, FileIdentity identity) {
        this.calls = calls;
        this.name = name;
        this.handle = handle;
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
        if (handle == 0) {
            return;
        }
        long h = handle;
        handle = 0;
        try {
            calls.unlockFileEx(h);
        } catch (WindowsException ignored) {
            // closing the handle releases its locks anyway
        }
        calls.closeHandle(h);
    }

    @Override
    public String toString() {
        return "WindowsStableLock[" + name + ", " + identity + "]";
    }
}
