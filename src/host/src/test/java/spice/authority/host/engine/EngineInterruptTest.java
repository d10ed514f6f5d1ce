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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperInterrupted;
import spice.authority.host.RetryPolicy;
import spice.authority.host.Session;
import spice.authority.host.Waits;
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
            Engine engine = Engine.builder(Authorities.of(tcp, session), ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes())))
                    .identity(ScriptedAgent.IDENTITY).build();

            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
                } catch (Throwable e) {
                    failure.set(e);
                }
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            // The token was read; the connect is pending (3 s timeout).
            Waits.awaitIn(t, "spice.authority.host.HttpTransport", "await", "connect");
            t.interrupt();
            t.join(10_000);
            assertThat(failure.get()).isInstanceOf(AuthorityFailedException.class);
            AuthorityFailedException a = (AuthorityFailedException) failure.get();
            assertThat(a.failure()).as("the transport's failure").isNotNull();
            assertThat(a.uncertain()).as("no connection was made, nothing was sent (%s: %s)",
                    a.failure().getClass().getName(), a.failure().getMessage()).isFalse();
            assertThat(a.failure()).isInstanceOf(HelperInterrupted.class);
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

    /**
     * An interrupt pending before the request's first byte (on the Unix endpoint connect never
     * waits, so no wait notices it): the request is not sent, and the outcome is known.
     */
    @Test
    void interruptPendingBeforeTheRequest_unix_isNotSent_andTheOutcomeIsKnown(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, r -> {
            if (r.line().equals("POST /v1/runs")) {
                try {
                    Thread.sleep(300); // the answer comes a little later, as from a busy helper
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return EngineAuthorityFailureTest.helper(r);
        })) {
            AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Engine engine = Engine.builder(Authorities.of(client, client.openSession()), ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes())))
                    .identity(ScriptedAgent.IDENTITY).build();
            int before = h.requests().size();

            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            Thread t = Thread.ofPlatform().start(() -> {
                Thread.currentThread().interrupt(); // e.g. a cancelled task: interrupted before the call
                try {
                    engine.start("run-1", ScriptedAgent.DEFINITION, "hello");
                } catch (Throwable e) {
                    failure.set(e);
                }
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            t.join(10_000);
            h.sync(); // the fake helper read whatever came

            assertThat(failure.get()).isInstanceOf(AuthorityFailedException.class);
            AuthorityFailedException a = (AuthorityFailedException) failure.get();
            assertThat(stillInterrupted).isTrue();
            assertThat(h.requests().subList(before, h.requests().size())).extracting(FakeHelper.Request::line)
                    .as("interrupted before the first byte: the start must not be sent").doesNotContain("POST /v1/runs");
            assertThat(a.failure()).as("%s: %s", a.failure().getClass().getName(), a.failure().getMessage())
                    .isInstanceOf(HelperInterrupted.class);
            assertThat(a.uncertain()).as("nothing was sent when the interrupt came: the run ID is not burned").isFalse();
        }
    }

    /**
     * A consume ended by an interrupt while waiting to repeat it is refused as aborted: the abort
     * runs with the interrupt cleared, so it reaches the helper (the prepared import would
     * otherwise keep the run locked until the session ends), and the interrupt is restored.
     */
    /**
     * A tool that fails with the thread's interrupt status set fails the run with its call
     * unresolved: the release that tells the helper the host stopped runs with the interrupt
     * cleared, so it reaches the helper (the run could otherwise not be abandoned until the session
     * ends), and the interrupt is restored.
     */
    @Test
    void toolFailsInterrupted_theFailedRunsReleaseStillReachesTheHelper(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Tool interrupted = Tool.of(ScriptedAgent.appendLedger(tmp.resolve("l"), null).definition(), (runId, callId, args) -> {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("the tool was interrupted");
            });
            Engine a = Engine.builder(Authorities.of(c, c.openSession()), ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(), interrupted)))
                    .identity(ScriptedAgent.IDENTITY).build();
            Run run = a.start("run-1", ScriptedAgent.DEFINITION, "hello");
            try {
                assertThatThrownBy(run::runTurn).isInstanceOf(RunFailedException.class);
                assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is restored").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("DELETE /v1/runs/run-1/lease");
        }
    }

    /**
     * A model call that fails with the thread's interrupt status set (no tool call open) fails the
     * run: its FAILED tombstone is signed with the interrupt cleared, so it reaches the helper (the
     * run would otherwise stay ACTIVE and owned until the session ends), and the interrupt is
     * restored.
     */
    @Test
    void modelFailsInterrupted_theFailedTombstoneStillReachesTheHelper(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Model interruptedModel = request -> {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("the model call was interrupted");
            };
            Engine a = Engine.builder(Authorities.of(c, c.openSession()), interruptedModel,
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(),
                            ScriptedAgent.appendLedger(tmp.resolve("l"), null))))
                    .identity(ScriptedAgent.IDENTITY).build();
            Run run = a.start("run-1", ScriptedAgent.DEFINITION, "hello");
            try {
                assertThatThrownBy(run::runTurn).isInstanceOf(RunFailedException.class)
                        .hasMessageNotContaining("the helper was not told");
                assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is restored").isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(h.requests()).extracting(FakeHelper.Request::line).contains("POST /v1/runs/run-1/snapshots");
            assertThat(run.export()).as("the FAILED tombstone's envelope").isNotEmpty();
        }
    }

    @Test
    void interruptedConsume_theAbortStillReachesTheHelper(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        byte[] envelope;
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            AuthorityClient c = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
            Engine a = Engine.builder(Authorities.of(c, c.openSession()), ScriptedAgent.model(),
                    StaticToolPlan.named(ScriptedAgent.PLAN_ID, List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(tmp.resolve("l"), null))))
                    .identity(ScriptedAgent.IDENTITY).build();
            Run first = a.start("run-x", ScriptedAgent.DEFINITION, "hello");
            first.runTurn();
            envelope = first.suspend();
        }
        Path tokenFile = tmp.resolve("token");
        FakeHelper.writeToken(tokenFile, TOKEN);
        try (FakeHelper h = FakeHelper.tcp(TOKEN, EngineAuthorityFailureTest.except("POST /v1/imports/imp-1/consume",
                FakeHelper.problem(503, "unavailable", "nothing was written")))) {
            AuthorityClient tcp = AuthorityClient.builder(new HelperEndpoint.Tcp(InetAddress.getLoopbackAddress(), h.port(), tokenFile))
                    .retry(new RetryPolicy(3, Duration.ofSeconds(30), Duration.ofSeconds(30))).build();
            StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                    List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(tmp.resolve("l2"), null)));
            Engine b = Engine.builder(Authorities.of(tcp, tcp.openSession()), ScriptedAgent.model(), plan)
                    .identity(ScriptedAgent.IDENTITY).build();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    b.importRun(envelope);
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            Waits.awaitIn(t, AuthorityClient.class.getName(), "pause"); // waiting 30 s to repeat the consume
            assertThat(h.requests()).extracting(FakeHelper.Request::line).anyMatch(l -> l.endsWith("/consume"));
            t.interrupt();
            t.join(10_000);
            h.sync(); // the fake helper read whatever came
            assertThat(failure.get()).isInstanceOfSatisfying(ImportRefusedException.class, e -> {
                assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.CONSUME_REFUSED);
                assertThat(e.getCause()).isInstanceOf(HelperInterrupted.class);
            });
            assertThat(h.requests()).extracting(FakeHelper.Request::line)
                    .as("refused as 'aborted before consume': the prepared import must be aborted at the helper (suppressed: %s)",
                            List.of(failure.get().getSuppressed()))
                    .contains("DELETE /v1/imports/imp-1");
        }
    }
}
