package spice.authority.app.api;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import spice.authority.core.RunAuthority;
import spice.authority.app.session.SessionMetrics;

/**
 * The helper's metrics, served at {@code GET /q/metrics} in the Prometheus text exposition format
 * (version 0.0.4, which every Prometheus-compatible scraper reads):
 *
 * <ul>
 *   <li>{@code spice_authority_transitions_total{kind,result}}, {@code spice_authority_refusals_total{code}},
 *       {@code spice_authority_sessions_opened_total}, {@code spice_authority_sessions_closed_total}: counters;
 *   <li>{@code http_server_requests_seconds{method,outcome,status,uri}}: a summary ({@code _count},
 *       {@code _sum}) of every API request, {@code uri} being the route template it matched;
 *   <li>{@code http_server_active_requests}: API requests in progress.
 * </ul>
 *
 * <p>Every label value comes from a bounded set (our codes and kinds, the route templates, the
 * standard methods, the status), never from a caller's path or header, so a caller cannot grow the
 * series without bound; and no label carries a key, MAC, session token or payload. Requests to
 * {@code /q/*} (health, metrics, OpenAPI) are not timed.
 *
 * <p>Written here rather than with Micrometer and its Quarkus extension (ARCHITECTURE.md's stack):
 * those load ~300 classes on every start, 2.7 MiB of the helper's resident memory (README, "Start-up,
 * measured here"), for four counters and one timer.
 */
@ApplicationScoped
public class Metrics implements SessionMetrics {
    static final String PATH = "/q/metrics";
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    /** Runs before {@link TransportGuard} (10,000), so refused requests are timed too. */
    static final int FILTER_PRIORITY = 20_000;

    /** A metric family: its name, Prometheus type and help text. */
    enum Family {
        TRANSITIONS("spice_authority_transitions_total", "counter", "Run state transitions by kind and result."),
        REFUSALS("spice_authority_refusals_total", "counter", "Requests refused with a problem answer, by problem code."),
        SESSIONS_OPENED("spice_authority_sessions_opened_total", "counter", "Sessions opened."),
        SESSIONS_CLOSED("spice_authority_sessions_closed_total", "counter", "Sessions closed (by the host, or because it exited)."),
        TEMP_SWEPT("spice_authority_temp_files_swept_total", "counter",
                "Leftover temporary files of interrupted writes removed when the authority was opened."),
        REQUESTS("http_server_requests_seconds", "summary", "API requests by method, outcome, status and route template."),
        ACTIVE("http_server_active_requests", "gauge", "API requests in progress.");

        final String metric;
        final String type;
        final String help;

        Family(String metric, String type, String help) {
            this.metric = metric;
            this.type = type;
            this.help = help;
        }
    }

    /** One series: a family and its rendered label set ({@code k="v",...}, possibly empty). */
    private record Series(Family family, String labels) {}

    private static final class Timing {
        final LongAdder count = new LongAdder();
        final LongAdder nanos = new LongAdder();
    }

    private final Map<Series, LongAdder> counters = new ConcurrentHashMap<>();
    private final Map<Series, Timing> requests = new ConcurrentHashMap<>();
    private final AtomicLong active = new AtomicLong();
    private volatile RouteTemplates routes = new RouteTemplates(List.of());

    /** The authority, for the swept-temp-file gauge; absent in tests that build a Metrics. */
    @Inject
    RunAuthority authority;

    public Metrics() {}

    /** With these templates from the start (tests; the helper takes them in {@link #registerFilter}). */
    Metrics(RouteTemplates routes) {
        this.routes = routes;
    }

    public void transition(String kind, String result) {
        count(Family.TRANSITIONS, labels("kind", kind, "result", result));
    }

    public void refusal(String code) {
        count(Family.REFUSALS, labels("code", code));
    }

    @Override
    public void sessionOpened() {
        count(Family.SESSIONS_OPENED, "");
    }

    @Override
    public void sessionClosed() {
        count(Family.SESSIONS_CLOSED, "");
    }

    private void count(Family family, String labels) {
        counters.computeIfAbsent(new Series(family, labels), s -> new LongAdder()).increment();
    }

    /**
     * Records one finished API request; {@code status} 0 is a request whose connection closed before
     * its answer was sent (labelled {@code UNKNOWN}).
     */
    void request(String method, String path, int status, long nanos) {
        String labels = status == 0
                ? labels("method", method(method), "outcome", "UNKNOWN", "status", "UNKNOWN", "uri", routes.label(path, 0))
                : labels("method", method(method), "outcome", outcome(status),
                        "status", Integer.toString(status), "uri", routes.label(path, status));
        Timing t = requests.computeIfAbsent(new Series(Family.REQUESTS, labels), s -> new Timing());
        t.count.increment();
        t.nanos.add(Math.max(0, nanos));
    }

    /** The exposition: each family that has a value, its series sorted by labels. */
    String render() {
        StringBuilder out = new StringBuilder(1024);
        for (Family f : Family.values()) {
            switch (f) {
                case REQUESTS -> {
                    List<Map.Entry<Series, Timing>> series = sorted(requests);
                    if (!series.isEmpty()) {
                        header(out, f);
                        for (Map.Entry<Series, Timing> e : series) {
                            String l = e.getKey().labels();
                            line(out, f.metric + "_count", l, Long.toString(e.getValue().count.sum()));
                            line(out, f.metric + "_sum", l, Double.toString(e.getValue().nanos.sum() / 1e9));
                        }
                    }
                }
                case ACTIVE -> {
                    header(out, f);
                    line(out, f.metric, "", Long.toString(active.get()));
                }
                case TEMP_SWEPT -> {
                    RunAuthority a = authority;
                    if (a != null) {
                        header(out, f);
                        line(out, f.metric, "", Integer.toString(a.sweptTempFiles()));
                    }
                }
                default -> {
                    List<Map.Entry<Series, LongAdder>> series = sorted(counters).stream()
                            .filter(e -> e.getKey().family() == f).toList();
                    if (!series.isEmpty()) {
                        header(out, f);
                        for (Map.Entry<Series, LongAdder> e : series) {
                            line(out, f.metric, e.getKey().labels(), Long.toString(e.getValue().sum()));
                        }
                    }
                }
            }
        }
        return out.toString();
    }

    private static <V> List<Map.Entry<Series, V>> sorted(Map<Series, V> map) {
        return map.entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<Series, V> e) -> e.getKey().family())
                        .thenComparing(e -> e.getKey().labels()))
                .toList();
    }

    private static void header(StringBuilder out, Family f) {
        out.append("# HELP ").append(f.metric).append(' ').append(f.help).append('\n');
        out.append("# TYPE ").append(f.metric).append(' ').append(f.type).append('\n');
    }

    private static void line(StringBuilder out, String metric, String labels, String value) {
        out.append(metric);
        if (!labels.isEmpty()) {
            out.append('{').append(labels).append('}');
        }
        out.append(' ').append(value).append('\n');
    }

    /** {@code k1="v1",k2="v2"} with the exposition format's escapes in the values. */
    static String labels(String... keysAndValues) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (i > 0) {
                b.append(',');
            }
            b.append(keysAndValues[i]).append("=\"");
            String v = keysAndValues[i + 1] == null ? "" : keysAndValues[i + 1];
            for (int j = 0; j < v.length(); j++) {
                char c = v.charAt(j);
                switch (c) {
                    case '\\' -> b.append("\\\\");
                    case '"' -> b.append("\\\"");
                    case '\n' -> b.append("\\n");
                    default -> b.append(c);
                }
            }
            b.append('"');
        }
        return b.toString();
    }

    /** The standard methods by name; any other method a caller sends is {@code OTHER}. */
    static String method(String m) {
        return switch (m) {
            case "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS" -> m;
            default -> "OTHER";
        };
    }

    static String outcome(int status) {
        return switch (status / 100) {
            case 1 -> "INFORMATIONAL";
            case 2 -> "SUCCESS";
            case 3 -> "REDIRECTION";
            case 4 -> "CLIENT_ERROR";
            case 5 -> "SERVER_ERROR";
            default -> "UNKNOWN";
        };
    }

    /**
     * Takes the route templates (a build without the OpenAPI document fails here, at start-up) and
     * times every API request from then on.
     */
    void registerFilter(@Observes Filters filters) {
        routes = RouteTemplates.fromOpenApi();
        filters.register(this::time, FILTER_PRIORITY);
    }

    /** The route template a raw request path matches (never the path itself: it may hold a session id). */
    String template(String rawPath) {
        return routes.label(rawPath, 200);
    }

    void registerRoute(@Observes Router router) {
        router.route(PATH).method(HttpMethod.GET).method(HttpMethod.HEAD).handler(rc -> rc.response()
                .putHeader("Content-Type", CONTENT_TYPE)
                .putHeader("Cache-Control", "no-store")
                .end(render()));
    }

    /**
     * Runs before authentication, so it must not fail on any request: it reads the raw path (the
     * normalised one throws on a malformed escape such as {@code /%zz}); {@link RouteTemplates}
     * labels whatever does not match a template, so an unusual spelling of a path costs only its label.
     */
    private void time(RoutingContext rc) {
        String path = rc.request().path();
        if (path == null || path.startsWith("/q/")) {
            rc.next();
            return;
        }
        long start = System.nanoTime();
        String method = rc.request().method().name();
        active.incrementAndGet();
        rc.addEndHandler(done -> {
            active.decrementAndGet();
            request(method, path, done.succeeded() ? rc.response().getStatusCode() : 0, System.nanoTime() - start);
        });
        rc.next();
    }
}
