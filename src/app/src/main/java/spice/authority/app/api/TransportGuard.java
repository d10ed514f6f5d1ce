package spice.authority.app.api;

import io.netty.channel.Channel;
import io.netty.channel.unix.PeerCredentials;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.unix.UnixChannel;
import io.netty.util.AttributeKey;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import spice.authority.app.runtime.RequestGate;
import spice.authority.app.runtime.BearerToken;
import spice.authority.app.runtime.BearerToken;
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.snapshot.contract.ProblemCode;

/**
 * The first filter on every request (API and {@code /q/*}): refuses new work while draining, then
 * authenticates the transport. On a Unix socket the peer's uid (SO_PEERCRED on Linux,
 * LOCAL_PEERCRED on macOS) must equal the helper's; on TCP the request must carry the bearer
 * token and, where the platform identifies a TCP peer's process (Windows: the owning pid from the
 * TCP table, then its user SID), that process must be one of this user's. The peer pid is attached
 * for sessions. On TCP exactly one request needs no token, {@code GET /v1/endpoint-proof}
 * ({@link EndpointProof}): it answers a MAC of the caller's nonce, so a client can prove the server
 * holds the token before it sends it; the peer-process check applies to it as to every request.
 * Connections themselves are counted and bounded from their accept by {@link ConnectionGate}
 * (which also refuses another user's TCP connection where the platform tells its owner); a
 * request with the token moves its TCP connection into the authenticated count, and a
 * Unix-socket request is charged to the process its credentials name, which must still run.
 */
@ApplicationScoped
public class TransportGuard {
    /** Routing-context key of the caller's pid (Unix socket; TCP where the platform identifies peers). */
    public static final String PEER_PID = "spice.peer.pid";
    private static final AttributeKey<Peer> CREDS = AttributeKey.valueOf("spice.peer.credentials");

    /** The peer of a Unix-socket connection, as its kernel recorded it at connect time. */
    private record Peer(int pid, long uid) {}

    @Inject
    Endpoint endpoint;

    @Inject
    PeerPolicy peers;

    /** The token of a TCP endpoint; null on a Unix socket, which has none. */
    @Inject
    BearerToken bearerToken;

    @Inject
    ProcessWatcher processes;

    @Inject
    RequestGate gate;

    void register(@Observes Filters filters) {
        filters.register(this::filter, 10_000);
    }

    /**
     * The first failure handler of every route: whatever failed outside the resources (an
     * {@link Error} in a filter or a route, a status set by Vert.x itself) is answered as a
     * problem, never as Quarkus's default page, and the helper keeps serving.
     */
    void registerFailureHandler(@Observes io.vertx.ext.web.Router router) {
        router.route().order(Integer.MIN_VALUE).failureHandler(this::failed);
    }

    private void failed(RoutingContext rc) {
        if (rc.response().ended() || rc.response().closed()) {
            return;
        }
        Throwable t = rc.failure();
        int status = t instanceof io.vertx.ext.web.handler.HttpException he ? he.getStatusCode() : rc.statusCode();
        if (t instanceof io.vertx.ext.web.handler.HttpException) {
            t = null;
        }
        if (t == null && status >= 400 && status < 500) {
            ProblemCode code = status == 401 ? ProblemCode.UNAUTHORIZED : status == 404 ? ProblemCode.NOT_FOUND : ProblemCode.INVALID_REQUEST;
            fail(rc, status, code, status == 413 ? "request body too large" : "request refused (HTTP " + status + ")", status == 413);
            return;
        }
        org.jboss.logging.Logger.getLogger(TransportGuard.class).errorf("%s outside the resources; the helper goes on serving",
                t == null ? "HTTP " + status : t.getClass().getName());
        // A request whose body was never handed on (BodyReader) reached no resource: nothing was written.
        boolean reachedNoResource = rc.get(BodyReader.BODY) == null;
        ProblemMappers.InternalError p = ProblemMappers.InternalError.of(rc.request().method().name(), null, reachedNoResource);
        fail(rc, p.status(), p.code(), p.detail(), false);
    }

    private void filter(RoutingContext rc) {
        if (endpoint instanceof Endpoint.Unix) {
            Peer pc = peer(rc.request().connection());
            if (pc == null) {
                fail(rc, 401, ProblemCode.UNAUTHORIZED, "peer credentials unavailable", true);
                return;
            }
            if (pc.uid() != peers.effectiveUid()) {
                // SECURITY: only processes of the helper's own user may talk to it.
                fail(rc, 401, ProblemCode.UNAUTHORIZED, "the caller's user id differs from the helper's", true);
                return;
            }
            if (!connections.covers(channelOf(rc))) {
                fail(rc, 503, ProblemCode.UNAVAILABLE, NOT_ADMITTED, true);
                return;
            }
            Refusal r = charge(channelOf(rc), pc.pid());
            if (r != null) {
                fail(rc, r.status(), r.code(), r.detail(), true);
                return;
            }
            rc.put(PEER_PID, (long) pc.pid());
        } else {
            TcpAdmission a = admitTcp(isEndpointProof(rc), rc.request().getHeader("Authorization"), bearerToken,
                    peers.tcpPeersIdentified(), () -> tcpPeerPid(rc.request().connection()));
            if (a.refusal() != null) {
                fail(rc, 401, ProblemCode.UNAUTHORIZED, a.refusal(), true);
                return;
            }
            Channel ch = channelOf(rc);
            if (ch == null || !connections.covers(ch)) {
                fail(rc, 503, ProblemCode.UNAVAILABLE, NOT_ADMITTED, true);
                return;
            }
            // A request with the token moves its connection out of the small count of connections
            // without it (ConnectionGate); the endpoint proof leaves it there, on its deadline.
            if (!isEndpointProof(rc) && !connections.authenticated(ch)) {
                fail(rc, 503, ProblemCode.UNAVAILABLE, "the helper has " + connections.authenticatedCount()
                        + " connections open that presented the token; the limit spice.authority.max-connections is "
                        + connections.maxConnections(), true);
                return;
            }
            if (peers.tcpPeersIdentified()) {
                long pid = a.pid();
                Refusal r = charge(ch, pid);
                if (r != null) {
                    fail(rc, r.status(), r.code(), r.detail(), true);
                    return;
                }
                rc.put(PEER_PID, pid);
            }
        }
        // SECURITY: the path as the helper reads it (PathText), before anything else reads it: a
        // segment that is not UTF-8 would otherwise be decoded leniently, to another run's ID.
        if (!PathText.isValidPath(rc.request().path())) {
            fail(rc, 400, ProblemCode.INVALID_REQUEST, PathText.RULE, true);
            return;
        }
        if (!gate.enter()) {
            fail(rc, 503, ProblemCode.CLOSING, "the helper is shutting down", true);
            return;
        }
        // In-flight accounting ends exactly once on every path: answered, refused or cut off.
        java.util.concurrent.atomic.AtomicBoolean exited = new java.util.concurrent.atomic.AtomicBoolean();
        rc.addEndHandler(v -> {
            if (exited.compareAndSet(false, true)) {
                gate.exit();
            }
        });
        bodies.read(rc, limitOf(rc), (status, code, detail) -> fail(rc, status, code, detail, true));
    }

    /** The transport checks' verdict on a TCP request: the 401 detail, or null and the proven peer pid (-1: not asked). */
    record TcpAdmission(long pid, String refusal) {}

    /** The detail of a refusal by the platform's TCP peer check. */
    static final String PEER_NOT_PROVEN = "the process at the other end of the connection is not proven to be one of this "
            + "user's (see the helper's log)";
    /** The detail of a refusal by the bearer check. */
    static final String WRONG_TOKEN = "missing or wrong bearer token (see the token file)";

    /**
     * The checks of a TCP request, in order: the bearer token (except for the endpoint proof),
     * then, where the platform identifies TCP peers (Windows), the owner of the connection, which
     * must be one of this user's processes ({@code peerPid} is asked only then).
     *
     * <p>SECURITY: exactly one route is answered without the token, the endpoint proof (a MAC of
     * the caller's nonce, never the token), so a client can prove the server holds the token before
     * it sends it; the peer check applies to it as to every other request, so a process of another
     * user is refused before the proof is computed.
     */
    static TcpAdmission admitTcp(boolean endpointProof, String authorization, BearerToken token, boolean peersIdentified,
                                 java.util.function.LongSupplier peerPid) {
        if (!endpointProof) {
            byte[] got = authorization != null && authorization.startsWith("Bearer ")
                    ? authorization.substring(7).trim().getBytes(StandardCharsets.US_ASCII) : new byte[0];
            // SECURITY: no token (never the case for a started helper) admits nobody, not an empty header.
            boolean ok = token != null && token.matches(got); // constant time
            java.util.Arrays.fill(got, (byte) 0);
            if (!ok) {
                return new TcpAdmission(-1, WRONG_TOKEN);
            }
        }
        if (peersIdentified) {
            // SECURITY: where the platform can tell (Windows), the process at the other end must
            // be one of this user's, token or not; unknown is refused (fail closed).
            long pid = peerPid.getAsLong();
            return pid <= 0 ? new TcpAdmission(-1, PEER_NOT_PROVEN) : new TcpAdmission(pid, null);
        }
        return new TcpAdmission(-1, null);
    }

    /**
     * The one request answered on TCP without the bearer token: {@code GET} on exactly the path
     * {@value EndpointProof#PATH} (as sent, not normalised: any other spelling needs the token).
     */
    static boolean isEndpointProof(RoutingContext rc) {
        return rc.request().method() == io.vertx.core.http.HttpMethod.GET && EndpointProof.PATH.equals(rc.request().path());
    }

    @Inject
    spice.authority.app.runtime.HelperConfig config;

    @Inject
    spice.authority.app.session.Quotas quotas;

    @Inject
    BodyReader bodies;

    /** The one problem path: counts every refusal answered here, as the resources' mappers do. */
    @Inject
    ProblemMappers problems;

    @Inject
    ConnectionGate connections;

    /** The detail of a refusal of a connection that the connection gate did not admit. */
    static final String NOT_ADMITTED = "this connection was not admitted by the helper's connection checks; open a new one";

    /** A refusal of the transport layer: status, code and detail. */
    record Refusal(int status, ProblemCode code, String detail) {}

    /** The process a connection is charged to: its pid and that process's start time. */
    private record Charge(long pid, long startTime, boolean admitted) {}

    /** Attribute holding the process a connection is counted against (its connection quota). */
    private static final AttributeKey<Charge> CHARGE = AttributeKey.valueOf("spice.peer.charge");

    /**
     * Counts the connection against the quota of the process named by this request's peer
     * credentials, and refuses the request unless that process still runs.
     *
     * <p>SECURITY: the quota bounds the connections a process <em>uses</em>, not the ones it made.
     * A connection is charged to the pid its request names (SO_PEERCRED on Linux: the process that
     * called connect(2), fixed for the socket's life; LOCAL_PEERPID on macOS: the socket's last
     * user, read on every request) together with that process's start time, and is served only
     * while that very process runs. Linux never tells which process holds a descriptor now: a
     * process that receives connections over SCM_RIGHTS from short-lived children (each within
     * its own quota) is refused on each of them once the child that made it has exited, so the
     * connections a set of processes can use are at most the quota times the number of those
     * processes still running, and all of them together at most max-connections (ConnectionGate).
     * When the pid named changes (macOS), the charge moves to the new process, within its quota.
     *
     * <p>RACE: the creator may exit and its pid be reused by a new process of the same user
     * between connect(2) and the first request; the connection is then charged to that process,
     * which counts it within its own quota as if it had made it.
     *
     * @return null when admitted
     */
    private Refusal charge(Channel ch, long pid) {
        java.util.OptionalLong started;
        try {
            started = processes.startTime(pid);
        } catch (spice.authority.os.ProcessWatchException e) {
            return new Refusal(503, ProblemCode.UNAVAILABLE, "cannot establish whether process " + pid
                    + ", at the other end of this connection, still runs; retry");
        }
        Charge c = ch.attr(CHARGE).get();
        if (c != null && c.pid() == pid) {
            if (!c.admitted()) {
                return overQuota(pid);
            }
            if (started.isEmpty() || started.getAsLong() != c.startTime()) {
                return exited(pid);
            }
            return null;
        }
        if (started.isEmpty()) {
            return exited(pid);
        }
        // The first request, or (macOS) another process now uses the connection: the charge moves.
        boolean ok = quotas.connectionOpened(pid);
        ch.attr(CHARGE).set(new Charge(pid, started.getAsLong(), ok));
        if (c == null) {
            ch.closeFuture().addListener(f -> {
                Charge last = ch.attr(CHARGE).getAndSet(null);
                if (last != null && last.admitted()) {
                    quotas.connectionClosed(last.pid());
                }
            });
        } else if (c.admitted()) {
            quotas.connectionClosed(c.pid());
        }
        return ok ? null : overQuota(pid);
    }

    private Refusal overQuota(long pid) {
        return new Refusal(429, ProblemCode.BUSY, "process " + pid + " has " + quotas.connectionsOf(pid)
                + " open connections; the quota spice.authority.max-connections-per-process is "
                + quotas.maxConnectionsPerProcess());
    }

    private static Refusal exited(long pid) {
        return new Refusal(503, ProblemCode.UNAVAILABLE, "process " + pid + ", which this connection's peer credentials name, "
                + "has exited: a connection is served only while that process runs; open a new connection");
    }

    private static Channel channelOf(RoutingContext rc) {
        return rc.request().connection() instanceof ConnectionBase cb ? cb.channel() : null;
    }

    /**
     * The largest binary envelope body: the largest envelope of any format spoken (v1alpha3's cap
     * is 16 MiB + 295 bytes, below v1alpha2's parse bound of 16 MiB + 1 KiB); the envelope's own
     * format cap is then checked by validation.
     */
    static final long LARGEST_ENVELOPE = java.util.Arrays.stream(spice.authority.snapshot.SnapshotFormat.values())
            .mapToLong(spice.authority.snapshot.SnapshotFormat::maxEnvelopeBytes).max().orElseThrow();

    /** The largest body any route accepts: an envelope in its JSON mapping (base64 of it plus headroom). */
    static final long LARGEST_BODY = LARGEST_ENVELOPE * 4 / 3 + 64 * 1024;

    /**
     * The largest body of this route: payloads 16 MiB, envelopes the envelope bound (JSON mapping:
     * base64 of it plus headroom), everything else {@code spice.authority.max-control-body}.
     */
    long limitOf(RoutingContext rc) {
        String path = rc.normalizedPath();
        if (path.startsWith("/v1/runs/") && path.endsWith("/snapshots")) {
            return spice.authority.snapshot.payload.Snapshot.MAX_PAYLOAD_BYTES;
        }
        if (path.equals("/v1/imports") || path.equals("/v1/snapshots/inspect")) {
            String type = rc.request().getHeader("Content-Type");
            boolean json = type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json");
            return json ? LARGEST_BODY : LARGEST_ENVELOPE;
        }
        return config.maxControlBody();
    }

    /**
     * Linux: Netty's epoll channel ({@code SO_PEERCRED}). macOS: the platform reads
     * {@code LOCAL_PEERCRED} and {@code LOCAL_PEERPID} at level {@code SOL_LOCAL} from the
     * kqueue channel's descriptor (os-posix); Netty's own kqueue {@code peerCredentials()} is not
     * used, because it asks at other levels. Anything else: null, and the request is refused.
     *
     * <p>RACE: none on the descriptor: this runs on the channel's event loop, which alone closes it.
     */
    private static Peer peer(HttpConnection conn) {
        if (!(conn instanceof ConnectionBase cb)) {
            return null;
        }
        Channel ch = cb.channel();
        Peer cached = ch.attr(CREDS).get();
        if (cached != null) {
            return cached;
        }
        Peer p;
        if (ch instanceof EpollDomainSocketChannel d) {
            try {
                PeerCredentials pc = d.peerCredentials();
                p = new Peer(pc.pid(), pc.uid());
            } catch (java.io.IOException e) {
                return null;
            }
        } else if (ch instanceof UnixChannel u) {
            try {
                spice.authority.os.PeerCredentials pc = SecureDirectories.provider().peerCredentials(u.fd().intValue());
                p = new Peer(Math.toIntExact(pc.pid()), pc.uid());
            } catch (java.io.IOException | RuntimeException e) {
                return null; // SECURITY: credentials that cannot be read are no credentials
            }
            // RACE: macOS records only the uid at connect(2); LOCAL_PEERPID is the last process to
            // use the peer socket (a child that inherited it, a launcher that handed it over). The
            // pid is therefore read again on every request, never cached.
            return p;
        } else {
            return null;
        }
        ch.attr(CREDS).set(p);
        return p;
    }

    /** Attribute holding the proven owner of a TCP connection (its pid), read once per connection. */
    private static final AttributeKey<Long> TCP_OWNER = AttributeKey.valueOf("spice.peer.tcp-owner");

    /**
     * The pid of the process of this user that owns the client end of this TCP connection, from the
     * platform ({@link spice.authority.os.SecureDirectoryProvider#tcpPeerPid}); -1 when it is not
     * proven (the reason is logged, without the token). Read once per connection: the owner of a
     * connection is fixed when it is made.
     *
     * <p>RACE: the owner may exit and its pid be reused while the connection lives; sessions bind a
     * pid to its start time and user, and the token is still checked on every request.
     */
    private static long tcpPeerPid(HttpConnection conn) {
        return conn instanceof ConnectionBase cb ? tcpPeerPid(cb.channel()) : -1;
    }

    /** {@link #tcpPeerPid(HttpConnection)} of a channel; also asked by the connection gate at accept. */
    static long tcpPeerPid(Channel ch) {
        Long cached = ch.attr(TCP_OWNER).get();
        if (cached != null) {
            return cached;
        }
        long pid = provenOwner(SecureDirectories.provider(), ch.remoteAddress(), ch.localAddress());
        ch.attr(TCP_OWNER).set(pid);
        return pid;
    }

    /**
     * The platform's answer for one TCP connection, fail closed: a pid of this user's process, or -1
     * when the addresses are not IP addresses, the platform refuses or cannot answer, or answers a
     * pid outside 1..2^31-1. The reason for a refusal is logged (it names addresses and pids only).
     */
    static long provenOwner(spice.authority.os.SecureDirectoryProvider platform, java.net.SocketAddress remote,
                            java.net.SocketAddress local) {
        if (!(remote instanceof java.net.InetSocketAddress peer) || !(local instanceof java.net.InetSocketAddress ours)) {
            LOG.warnf("refused a TCP connection: its addresses are not IP addresses");
            return -1;
        }
        try {
            long p = platform.tcpPeerPid(peer, ours);
            if (p > 0 && p <= Integer.MAX_VALUE) {
                return p;
            }
            LOG.warnf("refused a TCP connection: the platform named pid %d", p);
        } catch (java.io.IOException | RuntimeException e) {
            LOG.warnf("refused a TCP connection: %s", spice.authority.app.text.LogText.of(String.valueOf(e.getMessage())));
        }
        return -1;
    }

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(TransportGuard.class);

    /**
     * Answers a refusal of the transport layer as a problem, through the one problem path
     * ({@link ProblemMappers#refuse}), so it is counted like every other refusal.
     *
     * @param close also close the connection once answered (the caller may still be sending a
     *     body nobody will read, or is not to be served on this connection again)
     */
    private void fail(RoutingContext rc, int status, ProblemCode code, String detail, boolean close) {
        ProblemMappers.Problem problem = problems.refuse(status, code, detail, null);
        if (rc.response().ended() || rc.response().closed()) {
            return;
        }
        io.vertx.core.http.HttpServerResponse r = rc.response().setStatusCode(status)
                .putHeader("Content-Type", Problems.MEDIA_TYPE);
        if (status == 503 && code != ProblemCode.CLOSING) {
            r.putHeader("Retry-After", "1");
        }
        if (close) {
            r.putHeader("Connection", "close");
        }
        HttpConnection conn = rc.request().connection();
        r.end(problem.body()).onComplete(x -> {
            if (close && conn != null) {
                conn.close();
            }
        });
    }

    /** The caller's pid from the socket's peer credentials, or empty on TCP. */
    public static OptionalLong peerPid(RoutingContext rc) {
        Long pid = rc.get(PEER_PID);
        return pid == null ? OptionalLong.empty() : OptionalLong.of(pid);
    }
}
