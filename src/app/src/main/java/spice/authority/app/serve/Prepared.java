package spice.authority.app.serve;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.BearerToken;
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.app.runtime.ServeProducers;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * What {@code serve} prepared before Quarkus booted, held by {@code serve} itself to release it:
 * the opened authority (holding the single-instance lock), the endpoint directory and its lock,
 * the endpoint, the bearer token on TCP, the process watcher and the peer policy. Never a bean:
 * the container receives the separate beans ({@link #handOver}).
 */
record Prepared(RunAuthority authority, StableLock instanceLock, SecureDirectory endpointDir, StableLock endpointLock,
                Endpoint endpoint, BearerToken bearerToken, ProcessWatcher processes, PeerPolicy peers) {
    private static final Logger LOG = Logger.getLogger(Prepared.class);

    /** Hands the beans to the container's producers ({@link ServeProducers}); once per process. */
    void handOver() {
        ServeProducers.handOver(authority, processes, endpoint, peers, bearerToken);
    }

    /**
     * The clean-up: removes the endpoint files and releases the endpoint and instance locks; run
     * after the listener is closed (the exit handler of {@code Quarkus.run}). It acts once: later
     * runs do nothing, because the locks are gone by then and removing the socket again could
     * remove a newer helper's.
     */
    Runnable cleanUpOnce() {
        AtomicBoolean done = new AtomicBoolean();
        return () -> {
            if (done.compareAndSet(false, true)) {
                release();
            }
        };
    }

    /**
     * Removes the endpoint file (socket or token), zeroes the token, closes the authority and
     * releases both locks. For {@link #cleanUpOnce}, and for a start that fails after everything
     * was prepared, before any listener exists.
     */
    void release() {
        try {
            // The endpoint file is removed by its path; its directory must still be the one we hold
            // (and lock) open, else nothing is removed.
            // RACE: after this check only a process of this user could swap the 0700 directory
            // or the entry; the removal unlinks a name and never follows it.
            endpointDir.revalidate();
            switch (endpoint) {
                case Endpoint.Unix u -> ServeCommand.removeStaleSocket(Path.of(u.socketPath()));
                case Endpoint.Tcp t -> Files.deleteIfExists(Path.of(t.tokenFile()));
            }
        } catch (IOException | ServeCommand.Refusal | DirectoryRefusedException e) {
            LOG.warnf("endpoint file not removed: %s", e.getMessage());
        }
        if (bearerToken != null) {
            bearerToken.close();
        }
        authority.close();
        endpointLock.close();
        endpointDir.close();
        instanceLock.close();
    }

    @Override
    public String toString() {
        return "Prepared[" + endpoint.display() + ", authority=" + authority + "]";
    }
}
