package spice.authority.app.session;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.os.ProcessWatchException;
import spice.authority.os.ProcessWatcher;

/**
 * All host sessions. A session ends when its host process exits (noticed through the platform's
 * process watcher, not by polling) or when the host deletes it; either way every run lease and
 * import transaction it holds is closed exactly as the RFC closes an owner that died: locks are
 * released, durable records stay as they are.
 *
 * <p>What a session holds is recorded in the {@link LeaseBook}; the lease protocol of the API runs
 * through {@link RunLeases}. The registry opens, finds and closes sessions.
 *
 * <p><b>Guarantees.</b> A session is usable only by its host process (or, on a socket, that
 * process's descendants) and never outlives it (pid plus start time); closing it lets go of
 * everything it holds, whatever fails on the way.
 */
@ApplicationScoped
public class SessionRegistry {
    private static final Logger LOG = Logger.getLogger(SessionRegistry.class);
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    @Inject
    SessionMetrics metrics;

    @Inject
    HelperConfig config;

    @Inject
    Quotas quotas;

    /** What the sessions hold; let go of when a session closes. */
    @Inject
    LeaseBook leases;

    @Inject
    ProcessWatcher processes;

    @Inject
    PeerPolicy peers;

    private ProcessWatcher processes() {
        return processes;
    }

    private String newId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /**
     * Opens a session for the host process {@code pid} of this user.
     *
     * @param fromPeerCredentials the pid came from the socket's peer credentials
     */
    public Session open(long pid, boolean fromPeerCredentials) {
        // SECURITY: a declared host (TCP) must be below init, as a declared ancestor must be on a
        // socket: a session bound to init (or a container's first process) would never end.
        if (!fromPeerCredentials && pid <= 1) {
            throw new SessionException.NotHost("process " + pid + " cannot host a session: not a process of this user below init");
        }
        try {
            return openChecked(processes(), pid, fromPeerCredentials);
        } catch (ProcessWatchException e) {
            throw unknown(pid, e);
        }
    }

    /**
     * On a Unix socket, a caller may declare an ancestor of itself as the host (a shell that runs
     * curl): the session then lives as long as that ancestor. The chain is read from the kernel.
     */
    public Session openForAncestor(long peerPid, long declaredPid) {
        ProcessWatcher pw = processes();
        try {
            return openForAncestor(pw, peerPid, declaredPid);
        } catch (ProcessWatchException e) {
            throw unknown(declaredPid, e);
        }
    }

    private Session openForAncestor(ProcessWatcher pw, long peerPid, long declaredPid) throws ProcessWatchException {
        // RACE: the ancestry and uid are read before the start time that binds the session; a
        // declared process that exits in between and whose pid is reused in that instant yields a
        // session bound to the newcomer, which must itself be a process of this user (checked
        // below), so nothing crosses the user boundary.
        if (declaredPid != peerPid && !isAncestor(pw, declaredPid, peerPid)) {
            throw new SessionException.NotHost("process " + declaredPid + " is neither the caller nor one of its ancestors");
        }
        // SECURITY: the declared host must be a process of this user (never init or a root
        // launcher), or its session would outlive every real host.
        if (declaredPid <= 1 || !ownUser(pw, declaredPid)) {
            throw new SessionException.NotHost("process " + declaredPid + " cannot host a session: not a process of this user below init");
        }
        return openChecked(pw, declaredPid, true);
    }

    /**
     * SECURITY: unknown is not dead, and not alive either: a check that could not be made
     * (descriptor or memory exhaustion, an unreadable /proc) refuses the call as retryable and
     * changes nothing.
     */
    private static SessionException.Unavailable unknown(long pid, ProcessWatchException e) {
        LOG.warnf("liveness of pid %d unknown: %s", pid, e.getMessage());
        return new SessionException.Unavailable("cannot establish the state of process " + pid
                + " (" + e.getMessage() + "); nothing was changed, retry");
    }

    /** True when {@code ancestor} is a parent, grandparent, … of {@code pid} (bounded walk). */
    boolean isAncestor(ProcessWatcher pw, long ancestor, long pid) throws ProcessWatchException {
        long p = pid;
        for (int i = 0; i < 64; i++) {
            OptionalLong parent = pw.parentPid(p);
            if (parent.isEmpty() || parent.getAsLong() <= 0) {
                return false;
            }
            if (parent.getAsLong() == ancestor) {
                return true;
            }
            p = parent.getAsLong();
        }
        return false;
    }

    /**
     * Whether {@code pid} runs as the helper's user. POSIX: its real uid equals the helper's uid
     * read once at start ({@link PeerPolicy#effectiveUid()}), exactly one read per check as
     * before Windows was wired in. Windows (no uid, {@code effectiveUid} -1): the platform compares
     * token user SIDs ({@link ProcessWatcher#isOwnUser}). Unknown throws; never "same user".
     */
    private boolean ownUser(ProcessWatcher pw, long pid) throws ProcessWatchException {
        long euid = peers.effectiveUid();
        if (euid >= 0) {
            OptionalLong uid = pw.realUid(pid);
            return uid.isPresent() && uid.getAsLong() == euid;
        }
        return pw.isOwnUser(pid);
    }

    private Session openChecked(ProcessWatcher pw, long pid, boolean fromPeerCredentials) throws ProcessWatchException {
        // Per process first: one host alone can never fill the helper-wide cap.
        long ofThisProcess = sessions.values().stream().filter(o -> o.pid() == pid).count();
        if (ofThisProcess >= config.maxSessionsPerProcess()) {
            throw new SessionException.Busy("process " + pid + " already has " + ofThisProcess + " sessions",
                    "spice.authority.max-sessions-per-process", config.maxSessionsPerProcess());
        }
        if (sessions.size() >= config.maxSessions()) {
            throw new SessionException.Unavailable("too many sessions (" + config.maxSessions()
                    + "); close idle ones or raise spice.authority.max-sessions");
        }
        quotas.requireDescriptorReserve("a session");
        OptionalLong start = pw.startTime(pid);
        if (start.isEmpty()) {
            throw new SessionException.Invalid("process " + pid + " is not running");
        }
        // SECURITY: bind the uid to the process just identified by its start time (the SPI's
        // pattern: start time, uid, then still alive with that start time). Peer credentials are
        // read at connect time, so even a socket caller's pid is re-checked here: a host that died
        // and whose pid was reused must not leave a session bound to another user's process.
        boolean ours = ownUser(pw, pid);
        ProcessWatcher.Liveness after = pw.liveness(pid, start.getAsLong());
        if (after == ProcessWatcher.Liveness.UNKNOWN) {
            throw new ProcessWatchException("its start time cannot be read again");
        }
        if (!ours || after != ProcessWatcher.Liveness.ALIVE) {
            throw new SessionException.NotHost("process " + pid + " is not a live process of this user");
        }
        Session s = new Session(newId(), pid, start.getAsLong(), fromPeerCredentials);
        // RACE: the size check above and this put are not atomic: concurrent opens may exceed
        // max-sessions by the number of racing requests; the limit bounds memory, not security.
        sessions.put(s.id(), s);
        try {
            s.watch = pw.watch(pid, start.getAsLong(), () -> close(s, "host process " + pid + " exited"));
        } catch (ProcessWatchException | RuntimeException e) {
            sessions.remove(s.id());
            throw new SessionException.Unavailable("cannot watch process " + pid + ": " + e.getMessage());
        } catch (Error e) {
            sessions.remove(s.id()); // no session without a watch, whatever failed
            throw e;
        }
        // RACE: the watch may fire (on the watcher's thread) before s.watch is assigned; close(s)
        // then found no watch to close, so close it here.
        if (s.isClosed()) {
            s.watch.close();
            throw new SessionException.Invalid("process " + pid + " exited while its session was opened");
        }
        LOG.infof("session opened for pid %d (%s)", pid, fromPeerCredentials ? "peer credentials" : "declared, verified");
        metrics.sessionOpened();
        return s;
    }

    /**
     * The live session named by a request.
     *
     * @param callerPid the caller's pid from peer credentials, or empty on TCP
     */
    public Session require(String id, OptionalLong callerPid) {
        if (id == null || id.isBlank()) {
            throw new SessionException.Invalid("this call needs the Spice-Session header (open one with POST /v1/sessions)");
        }
        Session s = sessions.get(id);
        if (s == null || s.isClosed()) {
            throw new SessionException.UnknownSession("unknown or closed session");
        }
        // SECURITY: on a socket, a session is usable only by its host process or that process's
        // descendants (a host's helper tools, or curl run by a host shell).
        try {
            if (callerPid.isPresent() && s.pidFromPeerCredentials() && callerPid.getAsLong() != s.pid()
                    && !isAncestor(processes(), s.pid(), callerPid.getAsLong())) {
                throw new SessionException.NotHost("the session belongs to another process");
            }
        } catch (ProcessWatchException e) {
            throw unknown(callerPid.getAsLong(), e);
        }
        // SECURITY: the exit watcher closes the session asynchronously; until it has, a reused pid
        // must not inherit the session: the host must still be the process that opened it. Only a
        // proof of death closes it; an unknown refuses this call and keeps the session.
        switch (liveness(s)) {
            case ALIVE -> {
                return s;
            }
            case DEAD -> {
                close(s, "host process " + s.pid() + " exited");
                throw new SessionException.UnknownSession("unknown or closed session");
            }
            default -> throw new SessionException.Unavailable("cannot establish whether host process " + s.pid()
                    + " is alive; the session and its leases are kept, retry");
        }
    }

    /**
     * Whether the session's host is still running: from the watch's own descriptor when it has
     * one (sound even when the helper is out of descriptors), else from the process table.
     */
    ProcessWatcher.Liveness liveness(Session s) {
        ProcessWatcher.Watch w = s.watch;
        ProcessWatcher.Liveness l = w != null ? w.liveness() : ProcessWatcher.Liveness.UNKNOWN;
        return l != ProcessWatcher.Liveness.UNKNOWN ? l : processes().liveness(s.pid(), s.startTime());
    }

    public Optional<Session> find(String id) {
        return Optional.ofNullable(sessions.get(id));
    }

    public Collection<Session> all() {
        return sessions.values();
    }

    /** Closes a session and everything it holds. Idempotent. */
    public void close(Session s, String reason) {
        if (!s.markClosed(reason)) {
            return;
        }
        sessions.remove(s.id());
        // Every lease and import is let go whatever fails on the way (an Error included): a step
        // skipped would keep a run's lock with nothing left to release it (the session is marked
        // closed and gone from the registry). The first failure is thrown once all are done.
        Throwable failure = leases.releaseAll(s, reason);
        // The watch last: closing it wakes the watcher's thread, which can fail (no memory), and no
        // lock may wait on that.
        ProcessWatcher.Watch w = s.watch;
        if (w != null) {
            try {
                w.close();
            } catch (RuntimeException | Error e) {
                failure = firstOf(failure, e);
            }
        }
        LOG.infof("session for pid %d closed: %s", s.pid(), reason);
        metrics.sessionClosed();
        rethrow(failure);
    }

    /** Throws {@code failure} as it is (a RuntimeException or an Error), if there is one. */
    private static void rethrow(Throwable failure) {
        if (failure instanceof Error e) {
            throw e;
        }
        if (failure != null) {
            throw (RuntimeException) failure;
        }
    }

    static Throwable firstOf(Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }

    /**
     * Closes every session, each whatever another's close threw (since {@link #close} throws its
     * first failure once done, one session's Error would otherwise leave the rest holding their
     * runs' locks at shutdown); the first failure is thrown at the end.
     */
    public void closeAll(String reason) {
        Throwable failure = null;
        for (Session s : sessions.values().toArray(Session[]::new)) {
            try {
                close(s, reason);
            } catch (RuntimeException | Error e) {
                failure = firstOf(failure, e);
            }
        }
        rethrow(failure);
    }
}
