package spice.authority.app.serve;

import io.quarkus.arc.Unremovable;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.RequestGate;
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.session.SessionRegistry;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunAuthority;

/**
 * The running helper: announces the endpoint once requests are accepted, waits for SIGTERM, then
 * drains (new requests get {@code closing}, in-flight ones finish), releases every session's
 * leases, closes the authority (the master key is zeroed) and exits 0.
 *
 * <p>A bean: Quarkus creates it through the container, which injects what {@code serve} prepared
 * and the services it drains.
 */
@Singleton
@Unremovable
public final class ServeApplication implements QuarkusApplication {
    private static final Logger LOG = Logger.getLogger(ServeApplication.class);

    private final RunAuthority authority;
    private final Endpoint endpoint;
    private final HelperConfig config;
    private final RequestGate gate;
    private final SessionRegistry sessions;

    private final io.quarkus.vertx.http.HttpServer server;
    private final spice.authority.app.api.ConnectionGate connections;

    @Inject
    ServeApplication(RunAuthority authority, Endpoint endpoint, HelperConfig config, RequestGate gate, SessionRegistry sessions,
                     io.quarkus.vertx.http.HttpServer server, spice.authority.app.api.ConnectionGate connections) {
        this.server = server;
        this.connections = connections;
        this.authority = authority;
        this.endpoint = endpoint;
        this.config = config;
        this.gate = gate;
        this.sessions = sessions;
    }

    /** The start-up line of the formats taken, e.g. {@code snapshot formats: signing v1alpha2, v1alpha3; ...}. */
    static String formatsLine(spice.authority.snapshot.FormatPolicy p) {
        return "snapshot formats: signing " + versions(p.signing()) + "; verification " + versions(p.verification())
                + "; import " + versions(p.importing());
    }

    private static String versions(java.util.Set<spice.authority.snapshot.SnapshotFormat> formats) {
        java.util.StringJoiner j = new java.util.StringJoiner(", ");
        for (spice.authority.snapshot.SnapshotFormat f : spice.authority.snapshot.SnapshotFormat.values()) {
            if (formats.contains(f)) {
                j.add(f.version());
            }
        }
        return j.length() == 0 ? "none" : j.toString();
    }

    /**
     * The one start-up line about records that could not be read when the authority opened:
     * counts and reasons only (no file name, run ID or content).
     */
    static String unreadableLine(java.util.Map<spice.authority.core.UnreadableReason, Integer> counts) {
        int total = counts.values().stream().mapToInt(Integer::intValue).sum();
        java.util.StringJoiner j = new java.util.StringJoiner(", ");
        counts.forEach((reason, n) -> j.add(reason.wire() + "=" + n));
        return total + " record file(s) in the authority directory not readable at start, by reason: " + j
                + " (kept as they are; GET /v1/authority counts them)";
    }

    @Override
    public int run(String... args) {
        // Port 0: the system chose one, and clients must be told which.
        String shown = endpoint.bound(server.getPort()).display();
        LOG.infof("authority %s (scope %s, key generation %s) serving on %s", authority.directory(),
                authority.scopeIdHex(), Long.toUnsignedString(authority.keyGeneration()), shown);
        LOG.info(formatsLine(authority.formats()));
        authority.unreadableAtOpen().ifPresent(counts -> {
            if (counts.isEmpty()) {
                LOG.info("every record in the authority directory was readable at start");
            } else {
                LOG.warn(unreadableLine(counts));
            }
        });
        // SIGTERM and SIGINT end the service normally (exit 0) after draining, rather than the
        // JVM's default of running hooks and exiting 143.
        for (String name : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> Quarkus.asyncExit(0));
        }
        // SECURITY: the connection caps are in place before anyone is told where to connect;
        // without them the helper does not serve.
        try {
            connections.install();
        } catch (RuntimeException e) {
            LOG.errorf("refused to start: %s", e.getMessage());
            drain();
            return 1;
        }
        System.out.println("listening on " + shown);
        System.out.flush();
        Quarkus.waitForExit();
        drain();
        return 0;
    }

    /**
     * Stops accepting work, lets in-flight requests finish, then releases everything, all within
     * one budget ({@code spice.authority.drain-timeout}): bodies still arriving are cut off at once
     * (their requests reached no resource), requests in a resource get what the budget holds, and
     * the authority's leases what is left of it (at most {@code close-timeout}). Quarkus adds no
     * wait of its own afterwards (no {@code quarkus.shutdown.timeout}): SIGTERM ends the process
     * within the budget plus the listener's close.
     */
    private void drain() {
        spice.authority.core.Cancellation budget = spice.authority.core.Cancellation.withTimeout(config.drainTimeout());
        gate.close();
        if (!gate.awaitIdle(left(budget))) {
            LOG.warnf("shutdown: %d request(s) still in flight after %s", gate.inFlight(), config.drainTimeout());
        }
        sessions.closeAll("helper shutting down");
        try {
            Duration left = left(budget);
            authority.close(left.compareTo(config.closeTimeout()) < 0 ? left : config.closeTimeout());
        } catch (AuthorityException.Busy e) {
            LOG.warnf("shutdown: %s", e.getMessage());
        }
        // The endpoint files and locks are released by Prepared.cleanUpOnce from the exit handler, once
        // Quarkus has closed the listener: released here, a new helper could bind the same path
        // while this one still answers on it.
        LOG.infof("authority %s", authority.state().equals("closed") ? "closed; key zeroed" : "still " + authority.state());
    }

    private static Duration left(spice.authority.core.Cancellation budget) {
        return Duration.ofNanos(Math.max(0, budget.remainingNanos()));
    }
}
