package spice.authority.app.session;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.core.ActiveRun;
import spice.authority.os.ProcessWatcher;
import spice.authority.snapshot.RunId;

/**
 * One host process's session: the run leases and import transactions the helper holds on its
 * behalf. Bound to the process by pid and start time, so a reused pid cannot revive it.
 */
public final class Session {
    private final String id;
    private final long pid;
    private final long startTime;
    private final boolean pidFromPeerCredentials;
    final Map<RunId, ActiveRun> runs = new ConcurrentHashMap<>();
    final Map<String, ImportTx> imports = new ConcurrentHashMap<>();
    /** Calls admitted to add a lease or an import that have not finished (see SessionRegistry.admit). */
    final AtomicInteger pending = new AtomicInteger();
    /** Of those, the calls that open an import. */
    final AtomicInteger pendingImports = new AtomicInteger();
    volatile ProcessWatcher.Watch watch;
    private volatile boolean closed;
    private volatile String closeReason;

    Session(String id, long pid, long startTime, boolean pidFromPeerCredentials) {
        this.id = id;
        this.pid = pid;
        this.startTime = startTime;
        this.pidFromPeerCredentials = pidFromPeerCredentials;
    }

    public String id() {
        return id;
    }

    public long pid() {
        return pid;
    }

    public long startTime() {
        return startTime;
    }

    /** True on a Unix socket (pid proven by the kernel); false on TCP (declared, then verified alive). */
    public boolean pidFromPeerCredentials() {
        return pidFromPeerCredentials;
    }

    public boolean isClosed() {
        return closed;
    }

    public String closeReason() {
        return closeReason;
    }

    boolean markClosed(String reason) {
        synchronized (this) {
            if (closed) {
                return false;
            }
            closed = true;
            closeReason = reason;
            return true;
        }
    }

    public int runCount() {
        return runs.size();
    }

    /** The run IDs this session holds a lease on (a copy). */
    public java.util.Set<RunId> runIds() {
        return java.util.Set.copyOf(runs.keySet());
    }

    public int importCount() {
        return imports.size();
    }

    /** The id is a bearer secret on TCP: never printed, not even in part. */
    @Override
    public String toString() {
        return "Session[pid=" + pid + ", runs=" + runs.keySet() + ", imports=" + imports.size()
                + (closed ? ", closed: " + closeReason : "") + "]";
    }
}
