package spice.authority.app.runtime;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Makes what {@code serve} prepared before Quarkus booted (the {@link ServeContext}) a bean, so
 * that services receive the authority, the process watcher, the endpoint, the effective uid and
 * the bearer token by injection.
 *
 * <p><b>Guarantees.</b> The context is handed over once per process, before the container
 * starts, and every injection point sees that same instance; a container started without it fails
 * at the first injection instead of serving without an authority.
 */
@Singleton
public class ServeContextProducer {
    // The one static of the handoff: Quarkus builds the container inside Quarkus.run, after serve
    // has opened the authority and the endpoint, and offers no other way to pass objects in (the
    // arguments of Quarkus.run reach only the application's run method, not its configuration).
    // Only this package reads it: the producer below, when the container first asks for the bean,
    // and ServeListenerConfig, when Quarkus builds its configuration.
    private static final AtomicReference<ServeContext> PREPARED = new AtomicReference<>();

    /** Called by {@code serve} once, before Quarkus starts. */
    public static void handOver(ServeContext context) {
        if (!PREPARED.compareAndSet(null, context)) {
            throw new IllegalStateException("serve context already handed over");
        }
    }

    /** The context handed over, or null before (and without) {@code serve}: for {@link ServeListenerConfig}. */
    static ServeContext prepared() {
        return PREPARED.get();
    }

    @Produces
    @Singleton
    ServeContext serveContext() {
        ServeContext context = PREPARED.get();
        if (context == null) {
            throw new IllegalStateException("the container started without the context serve prepares");
        }
        return context;
    }
}
