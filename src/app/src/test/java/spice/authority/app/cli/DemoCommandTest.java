package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code demo}'s options, checked before anything starts (no helper, no host process). */
class DemoCommandTest {
    @Test
    void format_unknownVersion_isAUsageError_namingTheChoices() {
        CliRun r = CliRun.of("demo", "--format", "v1alpha9");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("unknown snapshot format 'v1alpha9'").contains("v1alpha2 or v1alpha3");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void format_wireStringInsteadOfVersion_isAUsageError() {
        CliRun r = CliRun.of("demo", "--format", "spice.agent.snapshot/v1alpha3");
        assertThat(r.exitCode()).isEqualTo(2);
    }

    @Test
    void help_documentsTheFormatAndItsDefault() {
        CliRun r = CliRun.of("demo", "--help");
        assertThat(r.exitCode()).isZero();
        String help = r.out().replaceAll("\\s+", " ");
        assertThat(help).as(r.out()).contains("--format=VERSION").contains("v1alpha2 (default").contains("--format v1alpha3");
    }
}
