package spice.authority.snapshot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** The format history spec-kit/formats.json, as shipped in the jar, and its loader. */
class FormatPolicyTest {
    private static final String V2 = "spice.agent.snapshot/v1alpha2";
    private static final String V3 = "spice.agent.snapshot/v1alpha3";

    private static String entry(String format, boolean sign, boolean verify, boolean imp) {
        return "{\"format\":\"" + format + "\",\"signing\":" + sign + ",\"verification\":" + verify + ",\"import\":" + imp
                + ",\"migration\":\"none: start a new run\"}";
    }

    private static FormatPolicy parse(String json) {
        return FormatPolicy.parse(json.getBytes(UTF_8));
    }

    @Test
    void resource_isByteForByteTheSpecKitFile() throws Exception {
        byte[] resource;
        try (InputStream in = FormatPolicy.class.getClassLoader().getResourceAsStream(FormatPolicy.RESOURCE)) {
            assertThat(in).as(FormatPolicy.RESOURCE + " on the class path").isNotNull();
            resource = in.readAllBytes();
        }
        assertThat(resource).isEqualTo(SpecFiles.bytes("formats.json"));
    }

    @Test
    void standard_acceptsBothFormatsForEverything_noMigration() {
        FormatPolicy p = FormatPolicy.standard();
        for (SnapshotFormat f : SnapshotFormat.values()) {
            assertThat(p.acceptsForSigning(f)).as(f.wire()).isTrue();
            assertThat(p.acceptsForVerification(f)).as(f.wire()).isTrue();
            assertThat(p.acceptsForImport(f)).as(f.wire()).isTrue();
            assertThat(p.migration(f)).isEqualTo("none: start a new run");
        }
        assertThat(p.signing()).isEqualTo(EnumSet.allOf(SnapshotFormat.class));
        assertThat(p.verification()).isEqualTo(EnumSet.allOf(SnapshotFormat.class));
        assertThat(p.importing()).isEqualTo(EnumSet.allOf(SnapshotFormat.class));
        assertThat(FormatPolicy.standard()).isSameAs(p);
    }

    @Test
    void refusing_narrowsOnlyTheNamedFormat() {
        FormatPolicy p = FormatPolicy.standard().refusing(SnapshotFormat.V1ALPHA3);
        assertThat(p.acceptsForSigning(SnapshotFormat.V1ALPHA3)).isFalse();
        assertThat(p.acceptsForVerification(SnapshotFormat.V1ALPHA3)).isFalse();
        assertThat(p.acceptsForImport(SnapshotFormat.V1ALPHA3)).isFalse();
        assertThat(p.signing()).containsExactly(SnapshotFormat.V1ALPHA2);
        assertThat(p.acceptsForImport(SnapshotFormat.V1ALPHA2)).isTrue();
        assertThat(FormatPolicy.standard().acceptsForSigning(SnapshotFormat.V1ALPHA3)).as("the original is unchanged").isTrue();
        assertThat(p.toString()).isEqualTo("FormatPolicy[" + V2 + " sign verify import, " + V3 + "]");
    }

    @Test
    void parse_perUseFlags() {
        FormatPolicy p = parse("{\"formats\":[" + entry(V2, false, true, false) + "," + entry(V3, true, true, true) + "]}");
        assertThat(p.acceptsForSigning(SnapshotFormat.V1ALPHA2)).isFalse();
        assertThat(p.acceptsForVerification(SnapshotFormat.V1ALPHA2)).isTrue();
        assertThat(p.acceptsForImport(SnapshotFormat.V1ALPHA2)).isFalse();
        assertThat(p.signing()).containsExactly(SnapshotFormat.V1ALPHA3);
    }

    @Test
    void parse_historyOnlyFormatUnknownToThisCode_acceptedForNothing() {
        FormatPolicy p = parse("{\"formats\":[" + entry("spice.agent.snapshot/v1alpha1", false, false, false) + ","
                + entry(V2, true, true, true) + "," + entry(V3, true, true, true) + "]}");
        assertThat(p.signing()).isEqualTo(EnumSet.allOf(SnapshotFormat.class));
    }

    @Test
    void parse_failsClosed() {
        String both = entry(V2, true, true, true) + "," + entry(V3, true, true, true);
        String[][] bad = {
            {"{\"formats\":[" + entry(V2, true, true, true) + "]}", "no entry for " + V3},
            {"{\"formats\":[" + both + "," + entry(V3, true, true, true) + "]}", "listed twice"},
            {"{\"formats\":[" + both + "," + entry("spice.agent.snapshot/v9", false, true, false) + "]}", "not spoken by this build"},
            {"{\"formats\":[" + both.replace("\"signing\":true", "\"signing\":\"yes\"") + "]}", "true or false"},
            {"{\"formats\":[" + both.replace(",\"migration\":\"none: start a new run\"", "") + "]}", "lacks"},
            {"{\"formats\":[" + both.replace("\"signing\"", "\"Signing\"") + "]}", "unexpected member"},
            {"{\"formats\":[" + both + "]}x", "not one object"},
            {"{\"formats\":[" + both + "]} {}", "not one object"},
            {"{}", "not one object"},
            {"[]", "unexpected JSON type"},
            {"", "not JSON"},
        };
        for (String[] c : bad) {
            assertThatThrownBy(() -> parse(c[0])).as(c[0]).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("snapshot format history is invalid: ").hasMessageContaining(c[1]);
        }
        assertThatThrownBy(() -> FormatPolicy.parse(new byte[64 * 1024 + 1])).hasMessageContaining("larger than");
    }
}
