package spice.authority.app.api;

import io.netty.channel.Channel;
import io.netty.channel.unix.PeerCredentials;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.util.AttributeKey;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.OptionalLong;
import spice.authority.app.serve.RequestGate;
import spice.authority.app.serve.ServeContext;

/**
 * The first filter on every request (API and {@code /q/*}): refuses new work while draining, then
 * authenticates the transport. On a Unix socket the peer's uid (SO_PEERCRED) must equal the
 * helper's; on TCP the request must carry the bearer token. The peer pid is attached for sessions.
 */
@ApplicationScoped
public class TransportGuard {
    /** Routing-context key of the caller's pid (Unix socket only). */
    public static final String PEER_PID = "spice.peer.pid";
    private static final AttributeKey<PeerCredentials> CREDS = AttributeKey.valueOf("spice.peer.credentials");

    @Inject
    RequestGate gate;

    void register(@Observes Filters filters) {
        filters.register(this::filter, 10_000);
    }

    private void filter(RoutingContext rc) {
        ServeContext ctx = ServeContext.current();
        if (ctx == null) {
            fail(rc, 503, "unavailable", "helper not initialised");
            return;
        }
        if (ctx.endpoint() instanceof ServeContext.Endpoint.Unix) {
            PeerCredentials pc = peer(rc.request().connection());
            if (pc == null) {
                fail(rc, 401, "unauthorized", "peer credentials unavailable");
                return;
            }
            if (pc.uid() != ctx.effectiveUid()) {
                // SECURITY: only processes of the helper's own user may talk to it.
                fail(rc, 401, "unauthorized", "the caller's user id differs from the helper's");
                return;
            }
            rc.put(PEER_PID, (long) pc.pid());
        } else {
            String auth = rc.request().getHeader("Authorization");
            byte[] want = ctx.bearerToken();
            byte[] got = auth != null && auth.startsWith("Bearer ") ? auth.substring(7).trim().getBytes(StandardCharsets.US_ASCII) : new byte[0];
            if (!MessageDigest.isEqual(want, got)) {
                fail(rc, 401, "unauthorized", "missing or wrong bearer token (see the token file)");
                return;
            }
        }
        String refusal = bodyTooLarge(rc);
        if (refusal != null) {
            fail(rc, 413, "invalid_request", refusal);
            return;
        }
        if (!gate.enter()) {
            fail(rc, 503, "closing", "the helper is shutting down");
            return;
        }
        rc.addEndHandler(v -> gate.exit());
        rc.next();
    }

    @Inject
    spice.authority.app.serve.HelperConfig config;

    /**
     * Refuses a body above its endpoint's bound from Content-Length, before any of it is read:
     * payloads 16 MiB, envelopes the envelope bound (JSON mapping: base64 of it plus headroom),
     * control bodies {@code spice.authority.max-control-body}. Bodies without Content-Length are
     * bounded by {@code quarkus.http.limits.max-body-size} and checked again after reading.
     */
    String bodyTooLarge(RoutingContext rc) {
        String cl = rc.request().getHeader("Content-Length");
        if (cl == null) {
            return null;
        }
        long length;
        try {
            length = Long.parseLong(cl.trim());
        } catch (NumberFormatException e) {
            return "malformed Content-Length";
        }
        String path = rc.normalizedPath();
        long max;
        if (path.startsWith("/v1/runs/") && path.endsWith("/snapshots")) {
            max = spice.authority.snapshot.payload.Snapshot.MAX_PAYLOAD_BYTES;
        } else if (path.equals("/v1/imports") || path.equals("/v1/snapshots/inspect")) {
            String type = rc.request().getHeader("Content-Type");
            boolean json = type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json");
            long env = spice.authority.snapshot.envelope.Envelope.MAX_ENCODED_BYTES;
            max = json ? env * 4 / 3 + 64 * 1024 : env;
        } else {
            max = config.maxControlBody();
        }
        return length > max ? "request body of " + length + " bytes is larger than " + max + " bytes for " + path : null;
    }

    private static PeerCredentials peer(HttpConnection conn) {
        if (!(conn instanceof ConnectionBase cb)) {
            return null;
        }
        Channel ch = cb.channel();
        PeerCredentials cached = ch.attr(CREDS).get();
        if (cached != null) {
            return cached;
        }
        if (!(ch instanceof EpollDomainSocketChannel d)) {
            return null;
        }
        try {
            PeerCredentials pc = d.peerCredentials();
            ch.attr(CREDS).set(pc);
            return pc;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private static void fail(RoutingContext rc, int status, String code, String detail) {
        rc.response().setStatusCode(status).putHeader("Content-Type", Problems.MEDIA_TYPE)
                .end(Problems.body(status, code, detail, null));
    }

    /** The caller's pid from the socket's peer credentials, or empty on TCP. */
    public static OptionalLong peerPid(RoutingContext rc) {
        Long pid = rc.get(PEER_PID);
        return pid == null ? OptionalLong.empty() : OptionalLong.of(pid);
    }
}
