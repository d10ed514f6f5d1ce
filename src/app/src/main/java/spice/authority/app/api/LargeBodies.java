package spice.authority.app.api;

import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import spice.authority.core.AuthorityException;

/**
 * One large body decoded at a time. The body budget ({@link BodyReader}) bounds the bytes of
 * bodies held at once, but decoding one takes several times its size (the largest payload the
 * rules allow, in its most expensive shape, about six times while it is decoded and signed): two
 * bodies of 11 MiB decoded together would take more than the helper's heap, and the error could
 * land in another host's durable write. A body of {@link BodyReader#LARGE_BODY} or more waits for
 * the one before it; a small one never waits.
 *
 * <p><b>Guarantees.</b> At most one holder of a large permit at a time; a caller that waited
 * {@link #wait} in vain is refused with {@code unavailable} before anything is decoded or written.
 */
@Singleton
public class LargeBodies {
    /** Below the host library's default read timeout (10 s): a waiting call is refused cleanly, not timed out as uncertain. */
    static final Duration DEFAULT_WAIT = Duration.ofSeconds(5);

    private final Semaphore one = new Semaphore(1, true);
    private final Duration wait;

    public LargeBodies() {
        this(DEFAULT_WAIT);
    }

    LargeBodies(Duration wait) {
        this.wait = wait;
    }

    /** A permit, held until closed. */
    public interface Permit extends AutoCloseable {
        @Override
        void close();
    }

    private static final Permit NONE = () -> { };

    /**
     * Waits, for a body of {@code length} bytes of at least {@link BodyReader#LARGE_BODY}, until
     * no other large body is being decoded.
     *
     * @throws AuthorityException.Unavailable waited {@link #wait} in vain, or interrupted: nothing was done
     */
    public Permit enter(long length) throws AuthorityException.Unavailable {
        if (length < BodyReader.LARGE_BODY) {
            return NONE;
        }
        boolean got;
        try {
            got = one.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            got = false;
        }
        if (!got) {
            throw new AuthorityException.Unavailable("another body of " + BodyReader.LARGE_BODY + " bytes or more is being "
                    + "decoded; nothing was done: retry");
        }
        java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                one.release();
            }
        };
    }
}
