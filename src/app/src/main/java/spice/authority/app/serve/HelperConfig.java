package spice.authority.app.serve;

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

    /** How long SIGTERM waits for requests in flight before releasing leases. */
    @WithDefault("10s")
    Duration drainTimeout();

    /** How long shutdown waits for the authority's leases after the sessions were closed. */
    @WithDefault("5s")
    Duration closeTimeout();

    /** Most concurrent host sessions; more are refused with {@code unavailable}. */
    @WithDefault("256")
    int maxSessions();

    /** Largest control (non-snapshot) request body. */
    @WithDefault("65536")
    int maxControlBody();
}
