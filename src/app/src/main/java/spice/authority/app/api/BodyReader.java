package spice.authority.app.api;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.RequestGate;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.contract.ProblemCode;

/**
 * Reads every request body before any resource runs, under two bounds enforced as the bytes
 * arrive (with or without Content-Length, chunked included):
 *
 * <ul>
 *   <li>the route's own limit: past it the answer is {@code 413} problem+json and the connection
 *       is closed, so the rest of the body is never read;
 *   <li>a helper-wide budget of body bytes held at once (all requests together, from the first
 *       byte until the answer is sent): past it the answer is {@code 503 unavailable} with
 *       {@code Retry-After} instead of running out of heap.
 * </ul>
 *
 * <p>The body is then handed to the resource through the routing context ({@link #of}); Quarkus
 * REST finds the request already ended and reads nothing itself. When the helper starts to drain
 * (SIGTERM), a body still arriving is cut off and answered {@code 503 closing}: its request has
 * reached no resource, so nothing was done, and shutdown does not wait for a slow sender.
 *
 * <p><b>Guarantees.</b> Bytes counted against the budget are given back exactly once, when the
 * request ends in any way (answered, refused, connection closed). A refused body is never
 * buffered beyond the chunk that crossed the limit.
 */
@ApplicationScoped
public class BodyReader {
    private static final Logger LOG = Logger.getLogger(BodyReader.class);
    /** Routing-context key of the request's body bytes. */
    static final String BODY = "spice.body";
    private static final byte[] EMPTY = new byte[0];

    @Inject
    HelperConfig config;

    @Inject
    Metrics metrics;

    @Inject
    RequestGate gate;

    private final AtomicLong held = new AtomicLong();
    /** Bodies still arriving: cut off when the gate closes. */
    private final java.util.Set<Reading> arriving = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile long budget;
    /** When the last large body ended (nanoTime), or 0 when no burst awaits its clean-up. */
    private final AtomicLong lastLargeBody = new AtomicLong();
    /** Bodies at least this large count as a burst worth giving memory back after. */
    static final long LARGE_BODY = 1 << 20;
    /** How long the helper must be free of large bodies before memory is given back. */
    static final long QUIET_NANOS = 5_000_000_000L;

    /** How a refusal is answered: status, problem code, detail. */
    @FunctionalInterface
    interface Refuse {
        void refuse(int status, ProblemCode code, String detail);
    }

    @jakarta.annotation.PostConstruct
    void cutBodiesWhenDraining() {
        gate.onClose(this::cutArriving);
    }

    /**
     * Ends every body still arriving with {@code 503 closing}, each on its own event loop. Its
     * request reached no resource: nothing was done, and a slow sender cannot hold up shutdown.
     */
    private void cutArriving() {
        for (Reading r : arriving) {
            r.context.runOnContext(v -> r.cut());
        }
    }

    /** The body the filter read for this request (empty when there was none). */
    public static byte[] of(RoutingContext rc) {
        byte[] b = rc.get(BODY);
        return b == null ? EMPTY : b;
    }

    /** Body bytes held right now, all requests together. */
    public long held() {
        return held.get();
    }

    /** The helper-wide budget in bytes. */
    public long budget() {
        long b = budget;
        if (b == 0) {
            long configured = config.bodyBudget();
            b = configured > 0 ? configured
                    : Math.max(TransportGuard.LARGEST_BODY + (1L << 20), Runtime.getRuntime().maxMemory() / 8);
            budget = b;
        }
        return b;
    }

    /**
     * After a burst of large bodies, once none has arrived for {@link #QUIET_NANOS}, one full GC
     * lets the heap shrink back (the launcher's small initial heap and free ratios allow it): the
     * JVM would otherwise keep every page the burst touched. At most one pending check at a time.
     */
    private void burstEnded(io.vertx.core.Vertx vertx) {
        if (lastLargeBody.getAndSet(System.nanoTime()) != 0) {
            return; // a check is already scheduled; it sees the new time
        }
        vertx.setTimer(QUIET_NANOS / 1_000_000, id -> quietCheck(vertx));
    }

    private void quietCheck(io.vertx.core.Vertx vertx) {
        long last = lastLargeBody.get();
        long waited = System.nanoTime() - last;
        if (waited < QUIET_NANOS || held.get() > 0) {
            long delayMs = waited < QUIET_NANOS ? (QUIET_NANOS - waited) / 1_000_000 + 1 : 1000;
            vertx.setTimer(delayMs, id -> quietCheck(vertx));
            return;
        }
        if (lastLargeBody.compareAndSet(last, 0)) {
            // Off the event loop: a full GC of a small heap takes milliseconds, but nobody waits for it.
            Thread.ofPlatform().daemon().name("spice-give-back-memory").start(System::gc);
        }
    }

    /**
     * Reads the body of {@code rc} within {@code limit} and the budget, then continues routing
     * with it; or refuses through {@code refuse}.
     */
    void read(RoutingContext rc, long limit, Refuse refuse) {
        HttpServerRequest req = rc.request();
        // SECURITY: a path may carry a session id (DELETE /v1/sessions/{id}): logs name the template.
        String path = metrics == null ? "the request" : metrics.template(req.path());
        String cl = req.getHeader("Content-Length");
        long declared = -1;
        if (cl != null) {
            try {
                declared = Long.parseLong(cl.trim());
            } catch (NumberFormatException e) {
                refuse.refuse(400, ProblemCode.INVALID_REQUEST, "malformed Content-Length");
                return;
            }
            if (declared < 0) {
                refuse.refuse(400, ProblemCode.INVALID_REQUEST, "malformed Content-Length");
                return;
            }
            if (declared > limit) {
                refuse.refuse(413, ProblemCode.INVALID_REQUEST, "request body of " + declared + " bytes is larger than "
                        + limit + " bytes for " + path);
                return;
            }
        }
        if (req.isEnded() || declared == 0) {
            rc.put(BODY, EMPTY);
            rc.next();
            return;
        }
        Reading r = new Reading(rc, limit, refuse, path);
        rc.addEndHandler(v -> r.release());
        arriving.add(r);
        // RACE: the gate may have closed after this request entered it and before it was added
        // here: the cut of the gate's close missed it, so cut it now (on this event loop).
        if (gate != null && gate.isClosed()) {
            r.cut();
            return;
        }
        // A body that does not arrive in time is refused, so a slow sender holds neither the
        // budget nor the in-flight count for long.
        long timeoutMs = config.bodyTimeout().toMillis();
        r.timer = rc.vertx().setTimer(Math.max(1, timeoutMs), id -> r.timedOut(timeoutMs));
        req.handler(r::chunk);
        req.endHandler(v -> r.end());
        req.exceptionHandler(e -> r.stop());
        // The caller waits for leave to send a body it announced: give it once the headers passed.
        if ("100-continue".equalsIgnoreCase(req.getHeader("Expect"))) {
            rc.response().writeContinue();
        }
        rc.addEndHandler(v -> r.cancelTimer());
        req.resume();
    }

    /** One body being read. Event-loop confined except {@link #release}, which is idempotent. */
    private final class Reading {
        private final RoutingContext rc;
        private final long limit;
        private final Refuse refuse;
        private final String path;
        private final AtomicLong reserved = new AtomicLong();
        /** The chunks as they came (no growing buffer: one copy into the body at the end). */
        private java.util.List<Buffer> data = new java.util.ArrayList<>();
        private long total;
        private boolean refused;
        long timer = -1;
        /** The request's event loop: everything but {@link #release} runs there. */
        final io.vertx.core.Context context;

        Reading(RoutingContext rc, long limit, Refuse refuse, String path) {
            this.context = rc.vertx().getOrCreateContext();
            this.rc = rc;
            this.limit = limit;
            this.refuse = refuse;
            this.path = path;
        }

        boolean reserve(long n) {
            if (refused) {
                return false; // nothing is reserved once given back
            }
            long now = held.addAndGet(n);
            reserved.addAndGet(n);
            if (now > budget()) {
                stop();
                LOG.warnf("body of %d bytes refused for %s: %d bytes of bodies held, budget %d", n, path, now - n, budget());
                refuse.refuse(503, ProblemCode.UNAVAILABLE, "the helper holds as many request bodies as it can ("
                        + budget() + " bytes); nothing was done, retry shortly");
                return false;
            }
            return true;
        }

        void chunk(Buffer b) {
            if (refused) {
                return;
            }
            total += b.length();
            if (total > limit) {
                stop();
                refuse.refuse(413, ProblemCode.INVALID_REQUEST, "request body larger than " + limit + " bytes for " + path);
                return;
            }
            if (!reserve(b.length())) {
                return;
            }
            data.add(b);
        }

        void timedOut(long ms) {
            timer = -1;
            if (refused) {
                return;
            }
            stop();
            refuse.refuse(408, ProblemCode.INVALID_REQUEST, "request body not received within " + ms + " ms for " + path);
        }

        /** Draining: a body still arriving is answered {@code closing}, its request never run. */
        void cut() {
            if (refused || !arriving.contains(this) || rc.response().ended() || rc.response().closed()) {
                return;
            }
            stop();
            refuse.refuse(503, ProblemCode.CLOSING, "the helper is shutting down; the request body was still arriving "
                    + "and nothing was done");
        }

        /** Refused or cut off: drop what was read, give back the budget, cancel the timer. */
        void stop() {
            arriving.remove(this);
            refused = true;
            data = null;
            release();
            cancelTimer();
        }

        private void cancelTimer() {
            if (timer >= 0) {
                rc.vertx().cancelTimer(timer);
                timer = -1;
            }
        }

        void end() {
            arriving.remove(this);
            cancelTimer();
            if (refused || rc.response().ended() || rc.response().closed()) {
                return;
            }
            byte[] body = new byte[(int) total];
            int at = 0;
            for (Buffer b : data) {
                b.getBytes(body, at);
                at += b.length();
            }
            rc.put(BODY, body);
            data = null;
            rc.next();
        }

        void release() {
            arriving.remove(this);
            long n = reserved.getAndSet(0);
            if (n != 0) {
                held.addAndGet(-n);
            }
            if (n >= LARGE_BODY || total >= LARGE_BODY) {
                burstEnded(rc.vertx());
            }
        }
    }
}
