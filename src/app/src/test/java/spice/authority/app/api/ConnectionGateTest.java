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
        while (System.currentTimeMillis() < until) {
            try {
                if (s.getInputStream().read() < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                // open: poll again
            } catch (java.net.SocketException e) {
                return true;
            }
        }
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
        ConnectionGate g = gate(2, Duration.ofSeconds(2));
        g.install();
        List<Socket> idle = List.of(connect(port), connect(port), connect(port));
        int closedAtOnce = 0;
        for (Socket s : idle) {
            closedAtOnce += closedWithin(s, 300) ? 1 : 0;
        }
        assertThat(closedAtOnce).isEqualTo(1);
        for (Socket s : idle) {
            assertThat(closedWithin(s, 5_000)).as("closed at the deadline").isTrue();
        }
    }
}
