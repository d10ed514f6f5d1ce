package spice.authority.app.api;

import io.vertx.ext.web.RoutingContext;
import java.util.OptionalLong;

/** What the transport proved about the caller. */
public record Caller(OptionalLong peerPid) {
    public static Caller of(RoutingContext rc) {
        return new Caller(TransportGuard.peerPid(rc));
    }
}
