package spice.authority.app.api;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import spice.authority.app.serve.ServeContext;

/** Ready while the authority is open; not ready while closing, closed or unavailable. */
@Readiness
@ApplicationScoped
public class ReadinessCheck implements HealthCheck {
    @Override
    public HealthCheckResponse call() {
        ServeContext ctx = ServeContext.current();
        String state = ctx == null ? "unavailable" : ctx.authority().state();
        return HealthCheckResponse.named("authority").status("open".equals(state)).withData("state", state).build();
    }
}
