package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import spice.authority.app.runtime.HelperConfig;
import spice.authority.app.runtime.PeerPolicy;

/**
 * The connection gate on a plain running Vert.x server, no Quarkus: it reaches the listening
 * channel (a field internal to Vert.x, so a Vert.x upgrade that moves it fails here, not in the
 * field), refuses to install with no listener, and holds its caps from the accept on.
 */
class ConnectionGateTest {
    private final Vertx vertx = Vertx.vertx();
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static HelperConfig config(Map<String, Object> values) {
        return (HelperConfig) java.lang.reflect.Proxy.newProxyInstance(HelperConfig.class.getClassLoader(),
                new Class<?>[] {HelperConfig.class}, (proxy, method, args) -> {
                    Object v = values.get(method.getName());
                    if (v == null) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    return v;
                });
    }

    private ConnectionGate gate(int maxUnauthenticated, Duration timeout) {
        ConnectionGate g = new ConnectionGate();
        g.vertx = vertx;
        g.config = config(Map.of("maxConnections", 512, "maxUnauthenticatedConnections", maxUnauthenticated,
                "unauthenticatedTimeout", timeout));
        g.peers = PeerPolicy.tokenOnly(0);
        return g;
    }

    /**
     * A server started in a verticle, as Quarkus starts its own; its port. Port -1, as Quarkus
     * asks for "any free port": a shared server (port 0 would not be shared, and Vert.x would
     * keep it out of its table of running servers).
     */
    private int listen() throws Exception {
        java.util.concurrent.CompletableFuture<Integer> port = new java.util.concurrent.CompletableFuture<>();
        vertx.deployVerticle(new io.vertx.core.AbstractVerticle() {
            @Override
            public void start(io.vertx.core.Promise<Void> started) {
                HttpServer server = vertx.createHttpServer().requestHandler(r -> r.response().end("ok"));
                server.listen(-1, "127.0.0.1").onSuccess(s -> {
                    port.complete(s.actualPort());
                    started.complete();
                }).onFailure(started::fail);
            }
        });
        return port.get(10, TimeUnit.SECONDS);
    }

    private Socket connect(int port) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        sockets.add(s);
        return s;
    }

    /** Whether the server closed {@code s} within {@code ms}. */
    private static boolean closedWithin(Socket s, long ms) throws IOException {
        long until = System.currentTimeMillis() + ms;
        s.setSoTimeout(20);
        do {
            try {
                if (s.getInputStream().read() < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                // open: poll again
            } catch (java.net.SocketException e) {
                return true;
            }
        } while (System.currentTimeMillis() < until);
        return false;
    }

    @Test
    void install_noListener_refusesToInstall() {
        assertThatThrownBy(() -> gate(8, Duration.ofSeconds(10)).install()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no listening channel");
    }

    @Test
    void installed_connectionsWithoutTheToken_pastTheCapClosedAtOnce_theRestAtTheirDeadline() throws Exception {
        int port = listen();
        Duration deadline = Duration.ofSeconds(4);
        ConnectionGate g = gate(2, deadline);
        long installed = System.nanoTime();
        g.install();
        List<Socket> idle = List.of(connect(port), connect(port), connect(port));
        // Wait for the first close, then look at all three at that moment: the cap closed exactly
        // one, long before any deadline, and the other two are still open.
        long firstClose = -1;
        int closedAtOnce = 0;
        long until = System.nanoTime() + deadline.toNanos();
        while (closedAtOnce == 0 && System.nanoTime() < until) {
            for (Socket s : idle) {
                closedAtOnce += closedWithin(s, 0) ? 1 : 0;
            }
            firstClose = System.nanoTime();
        }
        assertThat(closedAtOnce).as("connections closed by the cap before the first deadline").isEqualTo(1);
        assertThat(Duration.ofNanos(firstClose - installed)).as("the cap's close came before the deadline").isLessThan(deadline);
        for (Socket s : idle) {
            assertThat(closedWithin(s, deadline.toMillis() + 5_000)).as("closed at the deadline").isTrue();
        }
    }
}
