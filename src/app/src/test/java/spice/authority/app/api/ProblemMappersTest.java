package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.app.session.SessionException;
import spice.authority.snapshot.contract.ProblemCode;

/** Session refusals become the problems the API answered for them before they were domain types. */
class ProblemMappersTest {

    private record Case(SessionException failure, int status, ProblemCode code) {}

    @Test
    void session_eachKind_sameStatusCodeAndDetail() {
        ProblemMappers mappers = new ProblemMappers();
        mappers.metrics = new Metrics();
        List<Case> cases = List.of(
                new Case(new SessionException.UnknownSession("unknown or closed session"), 401, ProblemCode.UNAUTHORIZED),
                new Case(new SessionException.NotHost("the session belongs to another process"), 401, ProblemCode.UNAUTHORIZED),
                new Case(new SessionException.NotOwned("run r is not owned by this session"), 409, ProblemCode.STATE_CONFLICT),
                new Case(new SessionException.NotFound("no import i in this session"), 404, ProblemCode.NOT_FOUND),
                new Case(new SessionException.Busy("the session has 2 open imports", "spice.authority.max-imports-per-session", 2),
                        429, ProblemCode.BUSY),
                new Case(new SessionException.Unavailable("cannot establish the state of process 7 (EMFILE); nothing was changed, retry"),
                        503, ProblemCode.UNAVAILABLE),
                new Case(new SessionException.Invalid("process 7 is not running"), 400, ProblemCode.INVALID_REQUEST));
        List<String> failures = new ArrayList<>();
        for (Case c : cases) {
            Response r = mappers.session(c.failure());
            String want = Problems.body(c.status(), c.code(), c.failure().getMessage(), null);
            if (r.getStatus() != c.status() || !want.equals(r.getEntity())) {
                failures.add(c.failure().getClass().getSimpleName() + ": " + r.getStatus() + " " + r.getEntity());
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void busy_detailNamesTheSettingAndItsValue() {
        SessionException.Busy busy = new SessionException.Busy("the session holds 3 leases and imports",
                "spice.authority.max-leases-per-session", 3);
        assertThat(busy.getMessage())
                .isEqualTo("the session holds 3 leases and imports; the quota spice.authority.max-leases-per-session is 3");
        assertThat(busy.setting()).isEqualTo("spice.authority.max-leases-per-session");
        assertThat(busy.value()).isEqualTo(3);
    }

    /**
     * An unexpected failure is "uncertain" only where a durable write may have happened: a read,
     * or a call that writes nothing on any path, answers 503 unavailable (retry).
     */
    @Test
    void fatal_uncertainOnlyWhereAWriteMayHaveHappened() throws Exception {
        ProblemMappers mappers = new ProblemMappers();
        mappers.metrics = new Metrics();
        for (String method : List.of("openSession", "prepare", "inspect")) {
            Response r = mappers.fatal(new OutOfMemoryError(), request("POST"), resource(method));
            assertThat(r.getStatus()).as(method).isEqualTo(503);
            assertThat((String) r.getEntity()).as(method).contains("\"code\":\"unavailable\"").contains("nothing durable was written");
            assertThat(r.getHeaderString("Retry-After")).as(method).isEqualTo("1");
        }
        for (String method : List.of("sign", "start", "activate", "consume", "abandon", "resume", "release", "closeSession", "abort")) {
            Response r = mappers.fatal(new OutOfMemoryError(), request("POST"), resource(method));
            assertThat(r.getStatus()).as(method).isEqualTo(500);
            assertThat((String) r.getEntity()).as(method).contains("\"code\":\"uncertain\"");
        }
        assertThat(mappers.unexpected(new IllegalStateException(), request("GET"), resource("get")).getStatus()).isEqualTo(503);
        assertThat(mappers.unexpected(new IllegalStateException(), request("POST"), resource("prepare")).getStatus()).isEqualTo(503);
        assertThat(mappers.unexpected(new IllegalStateException(), request("POST"), resource("start")).getStatus()).isEqualTo(500);
    }

    private static jakarta.ws.rs.core.Request request(String method) {
        return (jakarta.ws.rs.core.Request) java.lang.reflect.Proxy.newProxyInstance(ProblemMappersTest.class.getClassLoader(),
                new Class<?>[] {jakarta.ws.rs.core.Request.class}, (proxy, m, args) -> {
                    if (m.getName().equals("getMethod")) {
                        return method;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    private static jakarta.ws.rs.container.ResourceInfo resource(String name) {
        java.lang.reflect.Method found = ResourceClasses.method(name);
        return new jakarta.ws.rs.container.ResourceInfo() {
            @Override
            public java.lang.reflect.Method getResourceMethod() {
                return found;
            }

            @Override
            public Class<?> getResourceClass() {
                return found.getDeclaringClass();
            }
        };
    }
}
