package spice.authority.app.api;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectoryProvider;

/**
 * Counts and bounds the helper's connections from the moment each is accepted, before a byte of
 * it is read, on every listener (the Unix socket and loopback TCP alike).
 *
 * <p><b>Guarantees.</b> Once {@link #install installed}:
 * <ul>
 *   <li>On the Unix socket at most {@code spice.authority.max-connections} connections are open
 *       (the one past it is closed as it is accepted).
 *   <li>On TCP a connection is <em>unauthenticated</em> until one of its requests carries the
 *       bearer token. At most {@code max-unauthenticated-connections} of those are open, each for
 *       at most {@code unauthenticated-timeout} from its accept (not an idle limit: a client that
 *       trickles bytes is closed all the same). Authenticated ones are counted apart, up to
 *       {@code max-connections}, so connections without the token never take the owner's room.
 *   <li>Where the platform tells the owner of a TCP peer (Linux: {@code /proc/net/tcp}; Windows:
 *       the owning process of the TCP table's row, then its user), a connection that is not
 *       proven this user's is closed as it is accepted: another user can hold no connection, not
 *       even the endpoint proof's.
 * </ul>
 *
 * <p>The gate sits first in each listening channel's pipeline and adds a {@link Slot} first to
 * every accepted channel. Quarkus gives no hook at accept and counts nothing on a Unix socket, so
 * the listening channels are taken from Vert.x's running servers (an internal field: if it cannot
 * be read, {@link #install} throws and {@code serve} refuses to start).
 *
 * <p>RACE: a connection accepted before the gate is installed has no slot; {@link #covers} is false
 * for it and the transport guard refuses its requests. {@code serve} installs the gate before it
 * prints its {@code listening on} line.
 */
@ApplicationScoped
public class ConnectionGate {
    private static final Logger LOG = Logger.getLogger(ConnectionGate.class);
    static final AttributeKey<Slot> SLOT = AttributeKey.valueOf("spice.connection.slot");
    private static final String NAME = "spice-connection-gate";

    @Inject
    HelperConfig config;

    @Inject
    PeerPolicy peers;

    @Inject
    io.vertx.core.Vertx vertx;

    private final AtomicInteger authenticated = new AtomicInteger();
    private final AtomicInteger unauthenticated = new AtomicInteger();
    private final AtomicLong refusedPeers = new AtomicLong();
    private final AtomicLong refusedFull = new AtomicLong();
    private volatile boolean installed;
    private volatile SecureDirectoryProvider platform;

    /**
     * Puts the gate in front of every listener of this helper.
     *
     * @throws IllegalStateException when no listener could be reached
     */
    public synchronized void install() {
        if (installed) {
            return;
        }
        platform = SecureDirectories.provider();
        Set<Channel> listeners = Collections.newSetFromMap(new IdentityHashMap<>());
        for (io.vertx.core.http.impl.HttpServerImpl s : ((io.vertx.core.impl.VertxInternal) vertx).sharedHttpServers().values()) {
            Channel c = listeningChannel(s);
            if (c != null) {
                listeners.add(c);
            }
        }
        if (listeners.isEmpty()) {
            throw new IllegalStateException("no listening channel found to guard");
        }
        Acceptor acceptor = new Acceptor();
        for (Channel c : listeners) {
            c.pipeline().addFirst(NAME, acceptor);
        }
        // RACE: added off the listener's event loop, the acceptor only becomes active once a task
        // queued on that loop has run; until then, accepts pass it by (uncounted, and so refused
        // by the transport guard). A task queued after it returns once it has run: from then on,
        // every accept is counted.
        for (Channel c : listeners) {
            if (!c.eventLoop().inEventLoop()) {
                c.eventLoop().submit(() -> { }).awaitUninterruptibly();
            }
        }
        installed = true;
        LOG.infof("connection caps: %d connections (Unix socket; TCP with the token), %d TCP connections without the token "
                        + "for at most %d ms each%s", config.maxConnections(), config.maxUnauthenticatedConnections(),
                config.unauthenticatedTimeout().toMillis(), checksTcpUsers() ? "; TCP peers of other users are refused" : "");
    }

    /** The listening channel of a running Vert.x server (its bind future's channel), or null. */
    private static Channel listeningChannel(io.vertx.core.net.impl.TCPServerBase server) {
        try {
            java.lang.reflect.Field f = io.vertx.core.net.impl.TCPServerBase.class.getDeclaredField("bindFuture");
            f.setAccessible(true);
            Object bound = f.get(server);
            if (bound instanceof io.vertx.core.Future<?> future && future.succeeded() && future.result() instanceof Channel c
                    && c.isActive()) {
                return c;
            }
            return null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach the listening channel of Vert.x's server (" + e.getClass().getSimpleName()
                    + "): the connection caps cannot be enforced", e);
        }
    }

    private boolean checksTcpUsers() {
        return !peers.tcpPeersIdentified() && platform != null && platform.identifiesTcpPeerUsers();
    }

    /** Whether the gate is in place and this channel went through it. */
    boolean covers(Channel ch) {
        if (!installed) {
            return true; // no gate (a test without serve): connections are not counted here
        }
        Slot s = ch == null ? null : ch.attr(SLOT).get();
        return s != null && s.counted();
    }

    /**
     * Moves a TCP connection whose request carried the token into the authenticated count.
     *
     * @return false when {@code max-connections} authenticated connections are open (refuse it)
     */
    boolean authenticated(Channel ch) {
        Slot s = ch.attr(SLOT).get();
        return s == null ? !installed : s.promote();
    }

    /** Authenticated (and Unix-socket) connections open now. */
    int authenticatedCount() {
        return authenticated.get();
    }

    int maxConnections() {
        return config.maxConnections();
    }

    /** Increments {@code n} unless it is at {@code max}. */
    private static boolean take(AtomicInteger n, int max) {
        while (true) {
            int v = n.get();
            if (v >= max) {
                return false;
            }
            if (n.compareAndSet(v, v + 1)) {
                return true;
            }
        }
    }

    /** First in each listener's pipeline: gives every accepted channel its slot. */
    @ChannelHandler.Sharable
    private final class Acceptor extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Channel child) {
                Slot slot = new Slot();
                child.attr(SLOT).set(slot);
                child.pipeline().addFirst(NAME, slot);
            }
            ctx.fireChannelRead(msg);
        }
    }

    private static final int NEW = 0;
    private static final int UNAUTHENTICATED = 1;
    private static final int AUTHENTICATED = 2;
    private static final int CLOSED = 3;

    /**
     * One accepted connection's place in the counts. Every transition runs on the channel's event
     * loop (accept, the transport guard's filter, the close listener and the deadline all do), and
     * is synchronized besides; the count it holds is given back exactly once, when it closes.
     */
    final class Slot extends ChannelInboundHandlerAdapter {
        private int state = NEW;
        private ScheduledFuture<?> deadline;

        synchronized boolean counted() {
            return state == UNAUTHENTICATED || state == AUTHENTICATED;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel ch = ctx.channel();
            if (!admit(ch)) {
                ch.close();
                return;
            }
            ch.closeFuture().addListener(f -> release());
            ctx.fireChannelActive();
        }

        private synchronized boolean admit(Channel ch) {
            if (!(ch.localAddress() instanceof InetSocketAddress)) {
                // A Unix socket: its peer's uid is checked from its credentials on each request.
                if (!take(authenticated, config.maxConnections())) {
                    full("Unix-socket", config.maxConnections(), "spice.authority.max-connections");
                    return false;
                }
                state = AUTHENTICATED;
                return true;
            }
            String refusal = tcpPeerRefusal(ch);
            if (refusal != null) {
                long n = refusedPeers.incrementAndGet();
                if (n == 1 || n % 100 == 0) {
                    LOG.warnf("refused a TCP connection (%d so far): %s", n, spice.authority.app.text.LogText.of(refusal));
                }
                return false;
            }
            if (!take(unauthenticated, config.maxUnauthenticatedConnections())) {
                full("TCP without the token", config.maxUnauthenticatedConnections(),
                        "spice.authority.max-unauthenticated-connections");
                return false;
            }
            state = UNAUTHENTICATED;
            long ms = Math.max(1, config.unauthenticatedTimeout().toMillis());
            deadline = ch.eventLoop().schedule(() -> {
                if (stillUnauthenticated()) {
                    ch.close();
                }
            }, ms, TimeUnit.MILLISECONDS);
            return true;
        }

        private synchronized boolean stillUnauthenticated() {
            return state == UNAUTHENTICATED;
        }

        synchronized boolean promote() {
            if (state == AUTHENTICATED) {
                return true;
            }
            if (state != UNAUTHENTICATED || !take(authenticated, config.maxConnections())) {
                return false;
            }
            unauthenticated.decrementAndGet();
            state = AUTHENTICATED;
            if (deadline != null) {
                deadline.cancel(false);
            }
            return true;
        }

        private synchronized void release() {
            switch (state) {
                case UNAUTHENTICATED -> unauthenticated.decrementAndGet();
                case AUTHENTICATED -> authenticated.decrementAndGet();
                default -> { }
            }
            state = CLOSED;
            if (deadline != null) {
                deadline.cancel(false);
            }
        }
    }

    private void full(String what, int max, String setting) {
        long n = refusedFull.incrementAndGet();
        if (n == 1 || n % 100 == 0) {
            LOG.warnf("refused a %s connection (%d so far): %d are open; the limit %s is %d", what, n, max, setting, max);
        }
    }

    /**
     * Why this TCP connection is refused at accept, or null. SECURITY: where the platform can tell,
     * the client end must be this user's (unknown is refused), so another user's process cannot
     * take a connection, nor ask for the endpoint proof.
     */
    private String tcpPeerRefusal(Channel ch) {
        if (peers.tcpPeersIdentified()) {
            // Windows: the owning process from the TCP table, of this user (read once, kept for the guard).
            return TransportGuard.tcpPeerPid(ch) > 0 ? null : TransportGuard.PEER_NOT_PROVEN;
        }
        if (!checksTcpUsers()) {
            return null;
        }
        if (!(ch.remoteAddress() instanceof InetSocketAddress peer) || !(ch.localAddress() instanceof InetSocketAddress ours)) {
            return "its addresses are not IP addresses";
        }
        try {
            platform.requireTcpPeerOfThisUser(peer, ours);
            return null;
        } catch (java.io.IOException | RuntimeException e) {
            return String.valueOf(e.getMessage());
        }
    }
}
