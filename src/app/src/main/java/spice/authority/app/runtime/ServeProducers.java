package spice.authority.app.runtime;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import spice.authority.core.RunAuthority;
import spice.authority.os.ProcessWatcher;

/**
 * Makes what {@code serve} prepared before Quarkus booted beans, one producer each: the
 * authority, the process watcher, the endpoint, the peer policy and (on TCP) the bearer token.
 * Each service injects only the ones it uses.
 *
 * <p><b>Guarantees.</b> The beans are handed over once per process, before the container
 * starts, and every injection point sees the same instances; a container started without them
 * fails at the first injection instead of serving without an authority.
 *
 * <p><b>Why a static.</b> The single-instance lock, the endpoint checks and the token file must
 * succeed before the listener binds, and a refused start must print its named refusal and exit
 * non-zero without Quarkus ever starting. Quarkus builds the container inside {@code Quarkus.run}
 * and offers no way to pass objects in (the arguments of {@code Quarkus.run} reach only the
 * application's run method). Opening the authority inside the container instead ({@code @Startup}
 * or a {@code StartupEvent} observer, which Quarkus runs before the HTTP server starts) would turn
 * every refusal into a failed Quarkus boot, with its own error output, after Quarkus had started;
 * and serve's options would still need a static to reach the configuration, since nothing is
 * carried in system properties.
 * So this is the one static of the hand-over; only this package reads it: the producers below,
 * when the container first asks for a bean, and {@link ServeListenerConfig}, for the endpoint.
 */
@Singleton
public class ServeProducers {
    /** The beans handed over; never itself a bean, and read only here. */
    private record Prepared(RunAuthority authority, ProcessWatcher processes, Endpoint endpoint, PeerPolicy peers,
                            BearerToken bearerToken) {}

    private static final AtomicReference<Prepared> PREPARED = new AtomicReference<>();

    /**
     * Called by {@code serve} once, before Quarkus starts.
     *
     * @param bearerToken the token of a TCP endpoint; null on a Unix socket
     */
    public static void handOver(RunAuthority authority, ProcessWatcher processes, Endpoint endpoint, PeerPolicy peers,
                                BearerToken bearerToken) {
        Prepared p = new Prepared(Objects.requireNonNull(authority), Objects.requireNonNull(processes),
                Objects.requireNonNull(endpoint), Objects.requireNonNull(peers), bearerToken);
        if (!PREPARED.compareAndSet(null, p)) {
            throw new IllegalStateException("serve's beans already handed over");
        }
    }

    /** The endpoint handed over, or null before (and without) {@code serve}: for {@link ServeListenerConfig}. */
    static Endpoint preparedEndpoint() {
        Prepared p = PREPARED.get();
        return p == null ? null : p.endpoint();
    }

    private static Prepared prepared() {
        Prepared p = PREPARED.get();
        if (p == null) {
            throw new IllegalStateException("the container started without the beans serve prepares");
        }
        return p;
    }

    @Produces
    @Singleton
    RunAuthority authority() {
        return prepared().authority();
    }

    @Produces
    @Singleton
    ProcessWatcher processes() {
        return prepared().processes();
    }

    @Produces
    @Singleton
    Endpoint endpoint() {
        return prepared().endpoint();
    }

    @Produces
    @Singleton
    PeerPolicy peers() {
        return prepared().peers();
    }

    /**
     * The bearer token on TCP; null on a Unix socket, where none exists (hence {@code @Dependent}:
     * CDI allows a null product only there). Injected only by the TCP checks.
     */
    @Produces
    @Dependent
    BearerToken bearerToken() {
        return prepared().bearerToken();
    }
}
