package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The hand-written exposition: its exact form, its bounded labels, its route templates. */
class MetricsTest {

    @Test
    void countersRenderInTheTextFormat_withHelpAndType_andTheGaugeAlways() {
        Metrics m = new Metrics();
        m.transition("start", "ok");
        m.transition("start", "ok");
        m.transition("import", "busy");
        m.refusal("not_found");
        m.sessionOpened();
        assertThat(m.render()).isEqualTo("""
                # HELP spice_authority_transitions_total Run state transitions by kind and result.
                # TYPE spice_authority_transitions_total counter
                spice_authority_transitions_total{kind="import",result="busy"} 1
                spice_authority_transitions_total{kind="start",result="ok"} 2
                # HELP spice_authority_refusals_total Requests refused with a problem answer, by problem code.
                # TYPE spice_authority_refusals_total counter
                spice_authority_refusals_total{code="not_found"} 1
                # HELP spice_authority_sessions_opened_total Sessions opened.
                # TYPE spice_authority_sessions_opened_total counter
                spice_authority_sessions_opened_total 1
                # HELP http_server_active_requests API requests in progress.
                # TYPE http_server_active_requests gauge
                http_server_active_requests 0
                """);
    }

    @Test
    void requestsAreLabelledWithTheirRouteTemplate_andSummedInSeconds() {
        Metrics m = new Metrics(RouteTemplates.fromOpenApi());
        m.request("POST", "/v1/runs/run-1/snapshots", 200, 1_500_000_000L);
        m.request("POST", "/v1/runs/other/snapshots", 200, 500_000_000L);
        m.request("DELETE", "/v1/imports/abc", 409, 1_000L);
        String out = m.render();
        assertThat(out).contains("# TYPE http_server_requests_seconds summary\n")
                .contains("http_server_requests_seconds_count{method=\"POST\",outcome=\"SUCCESS\",status=\"200\","
                        + "uri=\"/v1/runs/{run_id}/snapshots\"} 2\n")
                .contains("http_server_requests_seconds_sum{method=\"POST\",outcome=\"SUCCESS\",status=\"200\","
                        + "uri=\"/v1/runs/{run_id}/snapshots\"} 2.0\n")
                .contains("http_server_requests_seconds_count{method=\"DELETE\",outcome=\"CLIENT_ERROR\",status=\"409\","
                        + "uri=\"/v1/imports/{import}\"} 1\n")
                .doesNotContain("run-1").doesNotContain("abc");
    }

    @Test
    void callerChosenPathsAndMethods_neverBecomeLabels_soTheSeriesStayBounded() {
        Metrics m = new Metrics(RouteTemplates.fromOpenApi());
        for (int i = 0; i < 5_000; i++) {
            m.request("X-METHOD-" + i, "/v1/unknown/" + i + "\"}\n# evil", 404, 1);
            m.request("GET", "/v1/runs/" + i + "/nothing-here", 401, 1);
        }
        String out = m.render();
        assertThat(out).contains("http_server_requests_seconds_count{method=\"OTHER\",outcome=\"CLIENT_ERROR\","
                        + "status=\"404\",uri=\"NOT_FOUND\"} 5000\n")
                .contains("http_server_requests_seconds_count{method=\"GET\",outcome=\"CLIENT_ERROR\","
                        + "status=\"401\",uri=\"UNKNOWN\"} 5000\n")
                .doesNotContain("evil").doesNotContain("X-METHOD");
        assertThat(out.lines().filter(l -> l.startsWith("http_server_requests_seconds_count"))).hasSize(2);
    }

    @Test
    void aRequestWhoseConnectionClosedBeforeTheAnswer_isUnknown_notSuccess() {
        Metrics m = new Metrics(RouteTemplates.fromOpenApi());
        m.request("POST", "/v1/runs", 0, 10);
        assertThat(m.render()).contains("http_server_requests_seconds_count{method=\"POST\",outcome=\"UNKNOWN\","
                + "status=\"UNKNOWN\",uri=\"/v1/runs\"} 1\n");
    }

    @Test
    void labelValuesAreEscaped() {
        assertThat(Metrics.labels("code", "a\"b\\c\nd", "k", null)).isEqualTo("code=\"a\\\"b\\\\c\\nd\",k=\"\"");
        Metrics m = new Metrics();
        m.refusal("x\"}\n");
        assertThat(m.render()).contains("spice_authority_refusals_total{code=\"x\\\"}\\n\"} 1\n");
    }

    @Test
    void outcomesAndMethods() {
        assertThat(List.of(101, 204, 301, 404, 503, 99, 600).stream().map(Metrics::outcome).toList())
                .containsExactly("INFORMATIONAL", "SUCCESS", "REDIRECTION", "CLIENT_ERROR", "SERVER_ERROR", "UNKNOWN", "UNKNOWN");
        assertThat(Metrics.method("PATCH")).isEqualTo("PATCH");
        assertThat(Metrics.method("get")).isEqualTo("OTHER");
        assertThat(Metrics.method("PROPFIND")).isEqualTo("OTHER");
    }

    @Test
    void routeTemplates_areTheOpenApiPaths_andMatchWholeSegments() {
        RouteTemplates r = RouteTemplates.fromOpenApi();
        assertThat(r.label("/v1/runs", 200)).isEqualTo("/v1/runs");
        assertThat(r.label("/v1/runs/a", 200)).isEqualTo("/v1/runs/{run_id}");
        assertThat(r.label("/v1/runs/a/lease", 204)).isEqualTo("/v1/runs/{run_id}/lease");
        assertThat(r.label("/v1/imports/i/consume", 200)).isEqualTo("/v1/imports/{import}/consume");
        assertThat(r.label("/v1/runs//lease", 404)).isEqualTo(RouteTemplates.NOT_FOUND);
        assertThat(r.label("/v1/runs/a/b/c", 404)).isEqualTo(RouteTemplates.NOT_FOUND);
        assertThat(r.label("/v1/runs/", 405)).isEqualTo(RouteTemplates.UNKNOWN);
        assertThat(r.label("", 400)).isEqualTo(RouteTemplates.UNKNOWN);

        RouteTemplates t = new RouteTemplates(List.of("/a/{x}", "/a/b", "/{y}/{z}"));
        assertThat(t.label("/a/b", 200)).as("the most literal template wins, as in JAX-RS").isEqualTo("/a/b");
        assertThat(t.label("/a/c", 200)).isEqualTo("/a/{x}");
        assertThat(t.label("/c/d", 200)).isEqualTo("/{y}/{z}");
        assertThatThrownBy(() -> new RouteTemplates(List.of("a/b"))).isInstanceOf(IllegalArgumentException.class);
    }
}
