package spice.authority.host.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import spice.authority.host.AuthorityClient;
import spice.authority.host.FakeHelper;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperProtocolError;
import spice.authority.host.RetryPolicy;
import spice.authority.host.demo.ScriptedAgent;
import spice.authority.snapshot.SnapshotFormat;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.plan.PlanIdentities;
import spice.authority.snapshot.proto.SnapshotEnvelope;

/**
 * The engine's snapshot format: v1alpha2 by default, v1alpha3 with a workspace fingerprint when
 * chosen; imports of another format or workspace are refused before the helper hears of them.
 * Against the fake helper (which seals whatever format the payload names, as a helper that signs
 * v1alpha3 does).
 */
class EngineFormatTest {
    private static final String WS = "sha256:" + "ab".repeat(32);
    private static final String OTHER_WS = "sha256:" + "cd".repeat(32);

    /** An authority for engines that never call it (builder checks only). */
    private static final Authority NO_HELPER = (Authority) java.lang.reflect.Proxy.newProxyInstance(
            Authority.class.getClassLoader(), new Class<?>[] {Authority.class}, (p, m, a) -> {
                throw new IOException("no helper in this test");
            });

    private record Host(Engine engine, StaticToolPlan plan) {}

    private static Host host(Path sock, Path ledger, SnapshotFormat format, String workspace) throws IOException {
        AuthorityClient client = AuthorityClient.builder(new HelperEndpoint.Unix(sock)).retry(RetryPolicy.NONE).build();
        StaticToolPlan plan = StaticToolPlan.named(ScriptedAgent.PLAN_ID,
                List.of(ScriptedAgent.readNotes(), ScriptedAgent.appendLedger(ledger, null)));
        Engine engine = Engine.builder(Authorities.of(client, client.openSession()), ScriptedAgent.model(), plan)
                .identity(ScriptedAgent.IDENTITY.withWorkspace(workspace)).format(format).build();
        return new Host(engine, plan);
    }

    /** Run run-x of a fresh host of {@code format} and {@code workspace}, suspended after one turn. */
    private static byte[] suspendedEnvelope(Path sock, Path tmp, SnapshotFormat format, String workspace) throws Exception {
        Run run = host(sock, tmp.resolve("ledger-a"), format, workspace).engine().start("run-x", ScriptedAgent.DEFINITION, "hello");
        run.runTurn();
        return run.suspend();
    }

    private static long imports(FakeHelper h) {
        return h.requests().stream().filter(r -> r.line().startsWith("POST /v1/imports")).count();
    }

    @Test
    void defaultFormat_isV1alpha2_withoutWorkspace() throws Exception {
        Engine engine = Engine.builder(NO_HELPER, ScriptedAgent.model(), StaticToolPlan.of(List.of()))
                .identity(ScriptedAgent.IDENTITY).build();
        assertThat(engine.format()).isEqualTo(SnapshotFormat.V1ALPHA2);
        assertThat(engine.identity().workspaceFingerprint()).isEmpty();
    }

    @Test
    void v1alpha3Engine_writesV1alpha3WithItsWorkspace_andImportsItsOwnRun(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            byte[] envelope = suspendedEnvelope(sock, tmp, SnapshotFormat.V1ALPHA3, WS);
            Envelope e = Envelope.parse(envelope);
            assertThat(e.format()).isEqualTo(SnapshotFormat.V1ALPHA3.wire());
            assertThat(h.requests()).filteredOn(r -> r.line().endsWith("/snapshots"))
                    .allSatisfy(r -> assertThat(r.header("Content-Type")).isEqualTo("application/vnd.spice.snapshot.v1alpha3+json"));
            Snapshot s = Snapshot.decode(e.payload());
            assertThat(s.format()).isEqualTo(SnapshotFormat.V1ALPHA3);
            assertThat(s.workspaceFingerprint()).isEqualTo(WS);
            List<spice.authority.snapshot.plan.ToolDefinition> tools = List.of(ScriptedAgent.readNotes().definition(),
                    ScriptedAgent.appendLedger(tmp.resolve("x"), null).definition());
            assertThat(PlanIdentities.matches(SnapshotFormat.V1ALPHA3, s.planIdentity(), tools)).as("plan fingerprint v3").isTrue();
            assertThat(PlanIdentities.matches(SnapshotFormat.V1ALPHA2, s.planIdentity(), tools)).isFalse();

            Host b = host(sock, tmp.resolve("ledger-b"), SnapshotFormat.V1ALPHA3, WS);
            Run run = b.engine().importRun(envelope);
            assertThat(run.planIdentity()).isEqualTo(s.planIdentity());
            run.runTurn();
            assertThat(Snapshot.decode(Envelope.parse(run.suspend()).payload()).format()).isEqualTo(SnapshotFormat.V1ALPHA3);
        }
    }

    @Test
    void importRun_otherFormat_refusedBeforeTheHelperAndAnyLease(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            byte[] v3 = suspendedEnvelope(sock, tmp, SnapshotFormat.V1ALPHA3, WS);
            Host b = host(sock, tmp.resolve("ledger-b"), SnapshotFormat.V1ALPHA2, "");
            assertThatThrownBy(() -> b.engine().importRun(v3)).isInstanceOfSatisfying(ImportRefusedException.class, e -> {
                assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.FORMAT_MISMATCH);
                assertThat(e.getMessage()).contains("spice.agent.snapshot/v1alpha3").contains("spice.agent.snapshot/v1alpha2");
            });
            assertThat(imports(h)).as("import requests").isZero();
            assertThat(b.plan().liveLeases()).isZero();
            assertThat(b.engine().run("run-x")).isNull();
        }
        // And a v1alpha2 run offered to a v1alpha3 engine.
        Path sock2 = tmp.resolve("h2.sock");
        try (FakeHelper h = FakeHelper.unix(sock2, EngineAuthorityFailureTest::helper)) {
            Run first = host(sock2, tmp.resolve("ledger-c"), SnapshotFormat.V1ALPHA2, "").engine()
                    .start("run-x", ScriptedAgent.DEFINITION, "hello");
            first.runTurn();
            byte[] v2 = first.suspend();
            Host b = host(sock2, tmp.resolve("ledger-d"), SnapshotFormat.V1ALPHA3, WS);
            assertThatThrownBy(() -> b.engine().importRun(v2)).isInstanceOfSatisfying(ImportRefusedException.class,
                    e -> assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.FORMAT_MISMATCH));
            assertThat(imports(h)).isZero();
            assertThat(b.plan().liveLeases()).isZero();
        }
    }

    @Test
    void importRun_otherWorkspace_refusedBeforeTheHelperAndAnyLease(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            byte[] envelope = suspendedEnvelope(sock, tmp, SnapshotFormat.V1ALPHA3, WS);
            Host b = host(sock, tmp.resolve("ledger-b"), SnapshotFormat.V1ALPHA3, OTHER_WS);
            assertThatThrownBy(() -> b.engine().importRun(envelope)).isInstanceOfSatisfying(ImportRefusedException.class, e -> {
                assertThat(e.reason()).isEqualTo(ImportRefusedException.Reason.WORKSPACE_MISMATCH);
                assertThat(e.getMessage()).contains(WS).contains(OTHER_WS);
                assertThat(e.helperCode()).isNull();
            });
            assertThat(imports(h)).as("import requests").isZero();
            assertThat(b.plan().liveLeases()).isZero();
            // The right workspace then imports it: nothing was held.
            assertThat(host(sock, tmp.resolve("ledger-c"), SnapshotFormat.V1ALPHA3, WS).engine().importRun(envelope).runId())
                    .isEqualTo("run-x");
        }
    }

    @Test
    void build_workspaceWithV1alpha2_refused() {
        Engine.Builder b = Engine.builder(NO_HELPER, ScriptedAgent.model(), StaticToolPlan.of(List.of()))
                .identity(ScriptedAgent.IDENTITY.withWorkspace(WS));
        assertThatThrownBy(b::build).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("workspace fingerprint").hasMessageContaining("spice.agent.snapshot/v1alpha2");
        assertThat(b.format(SnapshotFormat.V1ALPHA3).build().format()).isEqualTo(SnapshotFormat.V1ALPHA3);
    }

    @Test
    void build_v1alpha3_compatibilityWithoutWorkspace_refused_P_WORKSPACE() {
        Engine.Builder b = Engine.builder(NO_HELPER, ScriptedAgent.model(), StaticToolPlan.of(List.of()))
                .identity(ScriptedAgent.IDENTITY).format(SnapshotFormat.V1ALPHA3);
        assertThatThrownBy(b::build).isInstanceOf(IllegalStateException.class).hasMessageContaining("P-WORKSPACE");
        // A convenience engine needs none, and may have one.
        b.identity(EngineIdentity.convenience()).build();
        b.identity(EngineIdentity.convenience().withWorkspace(WS)).build();
    }

    @Test
    void engineIdentity_workspaceOfTheWrongForm_refused() {
        for (String bad : List.of("SHA256:" + "ab".repeat(32), "sha256:" + "AB".repeat(32), "sha256:" + "a".repeat(63),
                "sha256:" + "a".repeat(65), " " + WS, "ab".repeat(32), "sha512:" + "ab".repeat(32))) {
            assertThatThrownBy(() -> ScriptedAgent.IDENTITY.withWorkspace(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(ScriptedAgent.IDENTITY.withWorkspace("sha256:" + "0".repeat(64)).workspaceFingerprint()).endsWith("0000");
    }

    /** A sign answer whose format is not the payload's (the engine's) is not the payload's envelope. */
    @Test
    void requireEnvelopeOf_anotherFormatThanThePayloads_refused(@TempDir Path tmp) throws Exception {
        Path sock = tmp.resolve("h.sock");
        try (FakeHelper h = FakeHelper.unix(sock, EngineAuthorityFailureTest::helper)) {
            byte[] envelope = suspendedEnvelope(sock, tmp, SnapshotFormat.V1ALPHA3, WS);
            byte[] payload = Envelope.parse(envelope).payload();
            assertThat(Authorities.requireEnvelopeOf("run-x", payload, envelope)).isSameAs(envelope);
            byte[] relabelled = SnapshotEnvelope.parseFrom(envelope).toBuilder().setFormat(SnapshotFormat.V1ALPHA2.wire())
                    .build().toByteArray();
            assertThatThrownBy(() -> Authorities.requireEnvelopeOf("run-x", payload, relabelled))
                    .isInstanceOf(HelperProtocolError.class).hasMessageContaining("not the envelope of the payload sent");
        }
    }
}
