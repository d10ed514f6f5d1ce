package spice.authority.app.serve;

import java.util.concurrent.atomic.AtomicReference;
import spice.authority.core.RunAuthority;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * What {@code serve} prepared before Quarkus booted: the opened authority (holding the
 * single-instance lock), the endpoint, and the bearer token on TCP. Installed once per process.
 */
public record ServeContext(RunAuthority authority, StableLock instanceLock, SecureDirectory endpointDir,
                           StableLock endpointLock, Endpoint endpoint, byte[] bearerToken, ProcessWatcher processes,
                           long effectiveUid) {

    /** Where the helper listens. */
    public sealed interface Endpoint {
        String display();

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

    private static final AtomicReference<ServeContext> CURRENT = new AtomicReference<>();

    public static void install(ServeContext c) {
        if (!CURRENT.compareAndSet(null, c)) {
            throw new IllegalStateException("serve context already installed");
        }
    }

    /** The installed context, or null outside {@code serve} (tests install their own). */
    public static ServeContext current() {
        return CURRENT.get();
    }

    /** For tests that run several helpers in one JVM sequentially. */
    public static void reset() {
        CURRENT.set(null);
    }

    @Override
    public String toString() {
        return "ServeContext[" + endpoint.display() + ", authority=" + authority + "]";
    }
}
