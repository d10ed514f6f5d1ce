package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;

/** The same commands run through the Quarkus application in command mode. */
@QuarkusMainTest
class QuarkusCommandModeTest {

    @Test
    void quarkusRunner_validate_sameOutputAndExitCodes(QuarkusMainLauncher launcher) {
        String ok = SpecFiles.resolve("payload-corpus/public/valid-01-minimal-suspended.json").toString();
        LaunchResult r = launcher.launch("snapshot", "validate", ok);
        assertThat(r.exitCode()).isZero();
        assertThat(r.getOutput()).contains(ok + ": OK run-1 suspended");

        String bad = SpecFiles.resolve("payload-corpus/public/invalid-history-empty.json").toString();
        LaunchResult r2 = launcher.launch("snapshot", "validate", bad);
        assertThat(r2.exitCode()).isEqualTo(1);
        assertThat(r2.getOutput()).contains(bad + ": REJECTED P-HIST-COUNT");

        LaunchResult r3 = launcher.launch("snapshot", "validate");
        assertThat(r3.exitCode()).isEqualTo(2);
    }
}
