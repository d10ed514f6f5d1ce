package spice.authority.app.api;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import spice.authority.core.RunAuthority;
import spice.authority.os.ProcessWatcher;

/**
 * Health in MicroProfile Health's JSON form, at Quarkus's paths:
 *
 * <ul>
 *   <li>{@code GET /q/health/live}: the helper answers (always UP while it serves);
 *   <li>{@code GET /q/health/ready}: UP while the authority is open; DOWN (503) while it is closing,
 *       closed or unavailable, with the state in the check's data;
 *   <li>{@code GET /q/health/started}: UP once the helper serves;
 *   <li>{@code GET /q/health}: all of them.
 * </ul>
 *
 * <p>A body is {@code {"status":"UP","checks":[{"name":"authority","status":"UP","data":{"state":"open"}}]}}
 * (the readiness check; liveness has no checks). Like every route, these pass {@link TransportGuard}
 * first: while the helper drains after SIGTERM every request, health included, is answered
 * {@code 503 closing} as a problem body.
 *
 * <p>Written here rather than with SmallRye Health (ARCHITECTURE.md's stack), which with its JSON-P
 * implementation loads ~100 classes on every start for one check (README, "Start-up, measured here").
 */
@ApplicationScoped
public class Health {
    /** The authority; absent only where a test builds a Health without one. */
    @Inject
    RunAuthority authority;

    /** The process watcher; absent only where a test builds a Health without one. */
    @Inject
    ProcessWatcher processes;

    static final String CONTENT_TYPE = "application/json; charset=UTF-8";

    void registerRoutes(@Observes Router router) {
        route(router, "/q/health/live").handler(rc -> answer(rc, List.of()));
        route(router, "/q/health/started").handler(rc -> answer(rc, List.of()));
        route(router, "/q/health/ready").handler(this::ready);
        route(router, "/q/health").handler(this::ready);
    }

    /** How long a store check's answer is reused, and how long a probe waits for a running one. */
    static final long STORE_CHECK_FRESH_NANOS = 2_000_000_000L;
    static final long STORE_CHECK_WAIT_MS = 1000;

    private final java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CompletableFuture<Map<String, Object>>> storeCheck =
            new java.util.concurrent.atomic.AtomicReference<>();
    private volatile Map<String, Object> lastStore;
    private volatile long lastStoreAt;

    /**
     * Readiness without blocking the event loop: the store check makes system calls (a walk of
     * the directory's path, a read, a listing, a write probe) that a dead or frozen filesystem can
     * hang, so it runs on its own
     * thread, one at a time, and its answer is reused for {@link #STORE_CHECK_FRESH_NANOS}. A
     * probe waits at most {@link #STORE_CHECK_WAIT_MS} for a running check, then answers DOWN
     * ("the store check did not finish").
     */
    private void ready(RoutingContext rc) {
        io.vertx.core.Context context = io.vertx.core.Vertx.currentContext();
        storeCheckResult()
                .completeOnTimeout(storeTimedOut(), STORE_CHECK_WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS)
                .thenAccept(store -> context.runOnContext(v -> answer(rc, List.of(authority(), store, processWatcher()))));
    }

    java.util.concurrent.CompletableFuture<Map<String, Object>> storeCheckResult() {
        Map<String, Object> last = lastStore;
        if (last != null && System.nanoTime() - lastStoreAt < STORE_CHECK_FRESH_NANOS) {
            return java.util.concurrent.CompletableFuture.completedFuture(last);
        }
        java.util.concurrent.CompletableFuture<Map<String, Object>> running = storeCheck.get();
        if (running != null) {
            return running.copy();
        }
        java.util.concurrent.CompletableFuture<Map<String, Object>> mine = new java.util.concurrent.CompletableFuture<>();
        if (!storeCheck.compareAndSet(null, mine)) {
            java.util.concurrent.CompletableFuture<Map<String, Object>> other = storeCheck.get();
            return other != null ? other.copy() : storeCheckResult();
        }
        Thread.ofPlatform().daemon().name("spice-store-check").start(() -> {
            Map<String, Object> result;
            try {
                result = store();
            } catch (RuntimeException | Error e) {
                result = down("store", "store check failed: " + e.getClass().getSimpleName());
            }
            lastStore = result;
            lastStoreAt = System.nanoTime();
            storeCheck.set(null);
            mine.complete(result);
        });
        return mine.copy();
    }

    private static Map<String, Object> storeTimedOut() {
        return down("store", "the store check did not finish within " + STORE_CHECK_WAIT_MS + " ms (a hung filesystem?)");
    }

    private static Map<String, Object> down(String name, String reason) {
        Map<String, Object> check = new LinkedHashMap<>();
        check.put("name", name);
        check.put("status", "DOWN");
        check.put("data", Map.of("reason", reason));
        return check;
    }

    /** GET, and HEAD for probes that only read the status. */
    private static io.vertx.ext.web.Route route(Router router, String path) {
        return router.route(path).method(HttpMethod.GET).method(HttpMethod.HEAD);
    }

    /** The readiness check: the authority's state ({@code open}, {@code closing}, ...). */
    Map<String, Object> authority() {
        RunAuthority a = authority;
        String state = a == null ? "unavailable" : a.state();
        Map<String, Object> check = new LinkedHashMap<>();
        check.put("name", "authority");
        check.put("status", "open".equals(state) ? "UP" : "DOWN");
        check.put("data", Map.of("state", state));
        return check;
    }

    /**
     * The store: DOWN with the reason when the store cannot be used ({@link
     * spice.authority.core.RunAuthority#checkStore}): the retained directory or the identity file
     * no longer revalidates, the identity file does not read, the directory does not list, or it
     * takes no durable write (a shut-down, read-only or failing file system). The reason names the
     * file and the failed call, never a file's content. Reads no record. Blocking: never called on
     * the event loop (see {@link #ready}).
     */
    Map<String, Object> store() {
        RunAuthority a = authority;
        Map<String, Object> check = new LinkedHashMap<>();
        check.put("name", "store");
        String reason = null;
        if (a == null) {
            reason = "helper not initialised";
        } else {
            try {
                a.checkStore();
            } catch (spice.authority.core.AuthorityException e) {
                reason = e.getMessage();
            }
        }
        check.put("status", reason == null ? "UP" : "DOWN");
        if (reason != null) {
            check.put("data", Map.of("reason", reason));
        }
        return check;
    }

    /**
     * The process watcher: DOWN once it can no longer notice host exits promptly (its thread
     * died); sessions then stay until their host is proven dead, and the helper should be restarted.
     */
    Map<String, Object> processWatcher() {
        ProcessWatcher p = processes;
        boolean up = p != null && p.healthy();
        Map<String, Object> check = new LinkedHashMap<>();
        check.put("name", "process-watcher");
        check.put("status", up ? "UP" : "DOWN");
        return check;
    }

    /** The overall answer: UP (200) when every check is UP, else DOWN (503). */
    static Map<String, Object> body(List<Map<String, Object>> checks) {
        boolean up = checks.stream().allMatch(c -> "UP".equals(c.get("status")));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", up ? "UP" : "DOWN");
        body.put("checks", checks);
        return body;
    }

    private static void answer(RoutingContext rc, List<Map<String, Object>> checks) {
        Map<String, Object> body = body(checks);
        rc.response().setStatusCode("UP".equals(body.get("status")) ? 200 : 503)
                .putHeader("Content-Type", CONTENT_TYPE)
                .putHeader("Cache-Control", "no-store")
                .end(io.vertx.core.buffer.Buffer.buffer(Json.bytes(body)));
    }
}
