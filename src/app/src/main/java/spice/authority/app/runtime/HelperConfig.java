package spice.authority.app.runtime;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * Helper settings ({@code spice.authority.*} in application.properties, system properties or
 * {@code SPICE_AUTHORITY_*} environment variables). The listener itself is chosen by
 * {@code serve}'s options.
 */
@ConfigMapping(prefix = "spice.authority")
public interface HelperConfig {

    /**
     * The one budget of SIGTERM's drain: requests in flight, then the authority's leases; nothing
     * else waits after it (bodies still arriving are cut off at once).
     */
    @WithDefault("10s")
    Duration drainTimeout();

    /** How long shutdown waits for the authority's leases after the sessions were closed (within {@link #drainTimeout()}). */
    @WithDefault("5s")
    Duration closeTimeout();

    /** Most concurrent host sessions; more are refused with {@code unavailable}. */
    @WithDefault("256")
    int maxSessions();

    /** Most sessions of one host process (so one host cannot fill {@link #maxSessions()}); more are {@code busy}. */
    @WithDefault("8")
    int maxSessionsPerProcess();

    /** Most run leases one session holds (each holds a lock descriptor); more are {@code busy}. */
    @WithDefault("256")
    int maxLeasesPerSession();

    /** Most open import transactions of one session; more are {@code busy}. */
    @WithDefault("16")
    int maxImportsPerSession();

    /** Most open Unix-socket connections of one host process; more are answered {@code busy} and closed. */
    @WithDefault("32")
    int maxConnectionsPerProcess();

    /**
     * Most open connections of all hosts: every Unix-socket connection, and the TCP connections
     * that presented the bearer token; the one past it is closed ({@code api/ConnectionGate}).
     */
    @WithDefault("512")
    int maxConnections();

    /**
     * Most open TCP connections that have not (yet) presented the bearer token, counted apart
     * from {@link #maxConnections()}; the one past it is closed as it is accepted.
     */
    @WithDefault("64")
    int maxUnauthenticatedConnections();

    /** How long a TCP connection may stay open, from its accept, without presenting the token. */
    @WithDefault("10s")
    Duration unauthenticatedTimeout();

    /**
     * Descriptors kept free for the helper's own work: a new session, lease or import is
     * {@code busy} when fewer would remain below the process's descriptor limit.
     */
    @WithDefault("64")
    int fdReserve();

    /**
     * Request body bytes the helper holds at once, all requests together; a body beyond it is
     * answered {@code 503 unavailable} with {@code Retry-After}. 0: an eighth of the maximum heap,
     * but never less than one largest snapshot plus 1 MiB (decoding a body takes several times its
     * size: the largest payload the rules allow, 4,096 messages of 128 one-character parts, holds
     * about six times its bytes while it is decoded).
     */
    @WithDefault("0")
    long bodyBudget();

    /** How long a request body may take to arrive once its headers have; then {@code 408}. */
    @WithDefault("30s")
    Duration bodyTimeout();

    /**
     * The snapshot formats the helper takes, as versions (e.g. {@code v1alpha2}); absent: every
     * format the shipped format history accepts ({@link FormatsSetting}). Only narrows, e.g. for a
     * test or a staged roll-out. {@code serve} reads it (as a system property or
     * {@code SPICE_AUTHORITY_FORMATS}) when it opens the authority, before Quarkus starts;
     * {@code serve --formats} takes precedence.
     */
    java.util.Optional<String> formats();

    /** Largest control (non-snapshot) request body. */
    @WithDefault("65536")
    int maxControlBody();
}
