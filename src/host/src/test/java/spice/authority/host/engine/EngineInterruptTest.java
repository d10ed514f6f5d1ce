package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.RetryPolicy;
import spice.authority.host.Session;
import spice.authority.host.demo.ScriptedAgent;

/** An interrupt before anything was sent ends a call with a known outcome: nothing happened. */
class EngineInterruptTest {
    private static final String TOKEN = "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface";

    /**
     * An interrupt while the TCP connect is still pending (the helper's backlog is full): no
     * connection, nothing sent. The start is not uncertain, the engine frees the run ID, and the
     * thread's interrupt status is kept.
     */
    @Test
    void interruptWhileTcpConnectPending_nothingSent_mustNotBeUncertain(@TempDir Path tmp) throws Exception {
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        Path sock = tmp.resolve("h.sock");
        List<java.net.Socket> fillers = new ArrayList<>();
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper);
             ServerSocketChannel s = ServerSocketChannel.open()) {
            Session session = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build().openSession();
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            for (int i = 0; ; i++) { // until the full accept queue drops the handshake
                assertThat(i).as("the backlog never filled").isLessThan(64);
                java.net.Socket f = new java.net.Socket();
                fillers.add(f);
                try {
                    f.connect(s.getLocalAddress(), 200);
                } catch (java.net.SocketTimeoutException e) {
                    break;
                }
            }
            int port = ((InetSocketAddress) s.getLocalAddress()).getPort();
            AuthorityClient tcp = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), port, tokenFile))
                    .retry(RetryPolicy.NONE).timeouts(Duration.ofSeconds(3), Duration.ofSeconds(5)).build();
            Engine engine = Engine.builder(Authority.of(tcp, session), ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes())))
                    .identity(ScriptedAgent.IDENTITY).build();

            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean stillInterrupted = new java.util.concurrent.atomic.AtomicBoolean();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
                } catch (Throwable e) {
                    failure.set(e);
                }
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            Thread.sleep(500); // the token was read; the connect is pending (3 s timeout)
            t.interrupt();
            t.join(10_000);
            assertThat(failure.get()).isInstanceOf(AuthorityFailedException.class);
            AuthorityFailedException a = (AuthorityFailedException) failure.get();
            assertThat(a.failure()).as("the transport's failure").isNotNull();
            assertThat(a.uncertain()).as("no connection was made, nothing was sent (%s: %s)",
                    a.failure().getClass().getName(), a.failure().getMessage()).isFalse();
            assertThat(a.failure()).isInstanceOf(spice.authority.host.HelperInterrupted.class);
            assertThat(stillInterrupted).as("the interrupt status is kept").isTrue();
            // The same start, not interrupted: unreachable again, never "already started".
            assertThatThrownBy(() -> engine.start("run-1", ScriptedAgent.DEFINITION, "hello"))
                    .isInstanceOf(AuthorityFailedException.class);
        } finally {
            for (var c : fillers) {
                c.close();
            }
        }
    }
}
