package spice.authority.app.runtime;

import spice.authority.core.RunAuthority;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * What {@code serve} prepared before Quarkus booted: the opened authority (holding the
 * single-instance lock), the endpoint, and the bearer token on TCP. Services receive it by
 * injection ({@link ServeContextProducer}); nothing reads it through a static.
 *
 * @param effectiveUid the helper's uid, compared with a Unix-socket peer's; -1 on Windows, where a
 *     process has a user SID and no Unix socket is served
 * @param tcpPeersIdentified on TCP, every connection's owning process must be proven to be one of
 *     this user's (the platform identifies TCP peers: Windows); false: the bearer token alone
 */
public record ServeContext(RunAuthority authority, StableLock instanceLock, SecureDirectory endpointDir,
                           StableLock endpointLock, Endpoint endpoint, BearerToken bearerToken, ProcessWatcher processes,
                           long effectiveUid, boolean tcpPeersIdentified) {

    /** A context whose TCP connections are checked by the bearer token alone. */
    public ServeContext(RunAuthority authority, StableLock instanceLock, SecureDirectory endpointDir,
                        StableLock endpointLock, Endpoint endpoint, BearerToken bearerToken, ProcessWatcher processes,
                        long effectiveUid) {
        this(authority, instanceLock, endpointDir, endpointLock, endpoint, bearerToken, processes, effectiveUid, false);
    }

    /** Where the helper listens. */
    public sealed interface Endpoint {
        String display();

        /**
         * This endpoint as bound: a TCP endpoint configured with port 0 (the system picks one)
         * gets {@code boundPort}; anything else is itself.
         */
        default Endpoint bound(int boundPort) {
            return this instanceof Tcp t && t.port() == 0 ? new Tcp(t.host(), boundPort, t.tokenFile()) : this;
        }

        record Unix(String socketPath) implements Endpoint {
            @Override
            public String display() {
                return "unix:" + socketPath;
            }
        }

        record Tcp(String host, int port, String tokenFile) implements Endpoint {
            @Override
            public String display() {
                return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
            }
        }
    }

    @Override
    public String toString() {
        return "ServeContext[" + endpoint.display() + ", authority=" + authority + "]";
    }
}
