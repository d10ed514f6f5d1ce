package spice.authority.snapshot.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.snapshot.payload.PayloadFixtures.OK;
import static spice.authority.snapshot.payload.PayloadFixtures.V01;
import static spice.authority.snapshot.payload.PayloadFixtures.V3_01;
import static spice.authority.snapshot.payload.PayloadFixtures.V3_06;
import static spice.authority.snapshot.payload.PayloadFixtures.edit;
import static spice.authority.snapshot.payload.PayloadFixtures.utf8;
import static spice.authority.snapshot.payload.PayloadFixtures.verdict;

import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SnapshotFormat;

/**
 * Both formats through one codec (wire-format-v1alpha3.md sections 2–3): the version picks the
 * shape and is named before unknown members; P-WORKSPACE in its place between P-COMPAT and P-FPR;
 * the builder per format.
 */
class PayloadV1alpha3Test {
    private static final Set<SnapshotFormat> V2_ONLY = Set.of(SnapshotFormat.V1ALPHA2);
    private static final Set<SnapshotFormat> V3_ONLY = Set.of(SnapshotFormat.V1ALPHA3);
    private static final String WS = "sha256:fa9a454f4b2cb603e158e82e8070bbd6e0fa67f7e5b42e4d8a9a50087663f3fe";
    private static final String WS_MEMBER = ",\"workspace_fingerprint\":\"" + WS + "\"";
    private static final String V2_VERSION = "\"version\":\"spice.agent.snapshot/v1alpha2\"";
    private static final String V3_VERSION = "\"version\":\"spice.agent.snapshot/v1alpha3\"";

    private static PayloadRejectedException refusal(String json, Set<SnapshotFormat> accepted) {
        try {
            Snapshot.decode(utf8(json), accepted);
        } catch (PayloadRejectedException e) {
            return e;
        }
        throw new AssertionError("accepted");
    }

    private static String v2WithWorkspace() {
        return edit(V01, "\"snapshot_compatibility_identity\":\"tests:v1\"", "\"snapshot_compatibility_identity\":\"tests:v1\"" + WS_MEMBER);
    }

    @Nested
    class VersionBeforeUnknown {
        @Test
        void v1alpha3Payload_whereOnlyV1alpha2IsAccepted_versionNamingIt() {
            PayloadRejectedException e = refusal(V3_01, V2_ONLY);
            assertThat(e.rule()).isEqualTo(PayloadRule.P_VERSION);
            assertThat(e.getMessage()).contains("\"spice.agent.snapshot/v1alpha3\"").contains("not accepted here")
                    .contains("accepted: spice.agent.snapshot/v1alpha2");
            assertThat(e.reason()).isEqualTo("version \"spice.agent.snapshot/v1alpha3\" is not accepted here "
                    + "(accepted: spice.agent.snapshot/v1alpha2)");
            assertThat(refusal(edit(V01, "\"status\":", "\"extra\":0,\"status\":"), V2_ONLY).reason())
                    .isEqualTo(PayloadRule.P_UNKNOWN.reason());
        }

        @Test
        void v1alpha2Payload_whereOnlyV1alpha3IsAccepted_version() {
            assertThat(refusal(V01, V3_ONLY).getMessage()).startsWith("P-VERSION: ").contains("\"spice.agent.snapshot/v1alpha2\"");
        }

        @Test
        void v1alpha2PayloadWithWorkspaceMember_versionNotUnknown() {
            PayloadRejectedException e = refusal(v2WithWorkspace(), Set.of(SnapshotFormat.values()));
            assertThat(e.rule()).isEqualTo(PayloadRule.P_VERSION);
            assertThat(e.getMessage()).contains("\"spice.agent.snapshot/v1alpha2\" has no plan_identity.workspace_fingerprint");
            // also when the member is null, a number, or spelled in another case
            assertThat(verdict(edit(v2WithWorkspace(), "\"" + WS + "\"", "null"))).isEqualTo("P-VERSION");
            assertThat(verdict(edit(v2WithWorkspace(), "\"" + WS + "\"", "5"))).isEqualTo("P-VERSION");
            assertThat(verdict(edit(v2WithWorkspace(), "workspace_fingerprint", "Workspace_Fingerprint"))).isEqualTo("P-VERSION");
            assertThat(verdict(v2WithWorkspace() + "x")).as("before trailing data").isEqualTo("P-VERSION");
        }

        @Test
        void unknownVersionWithUnknownMember_versionNamingTheText() {
            String p = edit(edit(V01, V2_VERSION, "\"version\":\"spice.agent.snapshot/v9\""), "\"status\":", "\"extra\":0,\"status\":");
            PayloadRejectedException e = refusal(p, Set.of(SnapshotFormat.values()));
            assertThat(e.rule()).isEqualTo(PayloadRule.P_VERSION);
            assertThat(e.getMessage()).contains("\"spice.agent.snapshot/v9\" is not a snapshot format");
        }

        @Test
        void versionText_isEscapedAndBounded() {
            String p = edit(V01, V2_VERSION, "\"version\":\"\\n" + "v".repeat(500) + "\"");
            String m = refusal(p, Set.of(SnapshotFormat.values())).getMessage();
            assertThat(m).contains("\\u000A").contains("chars)").hasSizeLessThan(300).doesNotContain("\n");
        }

        @Test
        void knownVersion_unknownMemberStaysUnknown_inBothFormats() {
            assertThat(verdict(edit(V01, "\"status\":", "\"extra\":0,\"status\":"))).isEqualTo("P-UNKNOWN");
            assertThat(verdict(edit(V3_01, "\"status\":", "\"extra\":0,\"status\":"))).isEqualTo("P-UNKNOWN");
        }

        @Test
        void typeErrorFirst_keepsItsPlace_unknownVersionOrNot() {
            String p = edit(edit(V3_01, V3_VERSION, "\"version\":\"x\""), "\"last_sequence\":7", "\"last_sequence\":7.0");
            assertThat(verdict(p)).isEqualTo("P-TYPE");
        }

        @Test
        void workspaceTypeError_countsForV1alpha3Only() {
            String v3 = edit(V3_01, "\"" + WS + "\"", "5");
            assertThat(verdict(v3)).isEqualTo("P-TYPE");
            assertThat(verdict(v3, V2_ONLY)).isEqualTo("P-VERSION");
            // the workspace type error comes before a later one in document order
            assertThat(refusal(edit(v3, "\"last_sequence\":7", "\"last_sequence\":\"7\""), Set.of(SnapshotFormat.values())).location())
                    .isEqualTo("plan_identity.workspace_fingerprint");
        }

        @Test
        void unknownVersionAlone_trailingDataStillFirst() {
            assertThat(verdict(edit(V01, V2_VERSION, "\"version\":\"x\"") + "x")).isEqualTo("P-TRAILING");
        }
    }

    @Nested
    class Workspace {
        private String ws(String base, String value) {
            return edit(base, "\"" + WS + "\"", value);
        }

        @Test
        void form_andRequirement() {
            assertThat(verdict(V3_01)).isEqualTo(OK);
            assertThat(verdict(ws(V3_01, "\"\""))).as("required with a compatibility identity").isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_01, "null"))).isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_01, "\"sha256:" + "0".repeat(64) + "\""))).isEqualTo(OK);
            assertThat(verdict(ws(V3_01, "\"sha256:" + "0".repeat(63) + "\""))).isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_01, "\"sha256:" + "0".repeat(65) + "\""))).isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_01, "\"sha256:" + "A".repeat(64) + "\""))).isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_01, "\"SHA256:" + "0".repeat(64) + "\""))).isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_01, "\"sha256:" + "\u00e9".repeat(32) + "\""))).as("64 bytes, not hex").isEqualTo("P-WORKSPACE");
            assertThat(verdict(ws(V3_06, "\"\""))).as("empty without a compatibility identity").isEqualTo(OK);
            assertThat(verdict(ws(V3_06, "\"x\""))).as("non-empty is always checked").isEqualTo("P-WORKSPACE");
        }

        @Test
        void order_afterCompat_beforeFingerprint() {
            String bad = ws(V3_01, "\"x\"");
            assertThat(verdict(edit(bad, "\"tests:v1\"", "\" tests:v1\""))).isEqualTo("P-COMPAT");
            assertThat(verdict(edit(bad, "\"sha256:95e7", "\"sha256:95E7"))).isEqualTo("P-WORKSPACE");
            assertThat(verdict(edit(V3_01, "\"sha256:95e7", "\"sha256:95E7"))).isEqualTo("P-FPR");
        }

        @Test
        void absentMember_readsEmpty_butIsNotCanonical() {
            String absent = edit(V3_06, WS_MEMBER, "");
            assertThat(verdict(absent)).isEqualTo("P-CANONICAL");
            assertThat(verdict(edit(V3_01, WS_MEMBER, ""))).isEqualTo("P-WORKSPACE");
        }
    }

    @Nested
    class Accessors {
        @Test
        void format_andWorkspace_perVersion() throws Exception {
            Snapshot v3 = Snapshot.decode(utf8(V3_01));
            assertThat(v3.format()).isEqualTo(SnapshotFormat.V1ALPHA3);
            assertThat(v3.workspaceFingerprint()).isEqualTo(WS).isEqualTo(v3.planIdentity().workspaceFingerprint());
            assertThat(v3.toString()).contains("format=spice.agent.snapshot/v1alpha3");
            Snapshot v2 = Snapshot.decode(utf8(V01));
            assertThat(v2.format()).isEqualTo(SnapshotFormat.V1ALPHA2);
            assertThat(v2.workspaceFingerprint()).isEmpty();
        }
    }

    @Nested
    class Builder {
        private Snapshot.Builder rebuild(Snapshot s) {
            Snapshot.Builder b = Snapshot.builder().runId(s.runId()).definition(s.definition())
                    .completedTurns(s.completedTurns()).planIdentity(s.planIdentity())
                    .seenInteractionIds(s.seenInteractionIds()).lastSequence(s.lastSequence()).status(s.status());
            s.history().forEach(b::addMessage);
            return b;
        }

        @Test
        void v1alpha3_rebuildsTheCorpusBytes() throws Exception {
            Snapshot s = Snapshot.decode(utf8(V3_01));
            Snapshot again = rebuild(s).format(SnapshotFormat.V1ALPHA3).build();
            assertThat(again.canonicalBytes()).isEqualTo(utf8(V3_01));
            assertThat(again.format()).isEqualTo(SnapshotFormat.V1ALPHA3);
        }

        @Test
        void defaultIsV1alpha2_andAWorkspaceIsNotDroppedSilently() throws Exception {
            Snapshot s = Snapshot.decode(utf8(V3_01));
            assertThatThrownBy(() -> rebuild(s).build()).isInstanceOf(PayloadRejectedException.class)
                    .hasMessageContaining("P-VERSION").hasMessageContaining("has no plan_identity.workspace_fingerprint");
            Snapshot v2 = Snapshot.decode(utf8(V01));
            assertThat(rebuild(v2).build().canonicalBytes()).isEqualTo(utf8(V01));
        }

        @Test
        void v1alpha3_workspaceRuleApplies() throws Exception {
            Snapshot v2 = Snapshot.decode(utf8(V01)); // compatibility tests:v1, no workspace
            assertThatThrownBy(() -> rebuild(v2).format(SnapshotFormat.V1ALPHA3).build())
                    .isInstanceOfSatisfying(PayloadRejectedException.class, e -> assertThat(e.rule()).isEqualTo(PayloadRule.P_WORKSPACE));
        }
    }
}
