package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs the README's curl flow verbatim (the block between the curl-flow markers). */
class ReadmeCurlFlowIT {

    @Test
    void readmeCurlFlow_runsAsWritten() throws Exception {
        Path repo = Path.of("../..").toAbsolutePath().normalize();
        String readme = Files.readString(repo.resolve("README.md"));
        int begin = readme.indexOf("<!-- curl-flow:begin -->");
        int end = readme.indexOf("<!-- curl-flow:end -->");
        assertThat(begin).isPositive();
        assertThat(end).isGreaterThan(begin);
        String block = readme.substring(begin, end);
        String script = block.substring(block.indexOf("```sh\n") + 6, block.lastIndexOf("```"));
        Path demo = Files.createTempDirectory("spice-readme-");
        try {
            ProcessBuilder pb = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script).directory(repo.toFile())
                    .redirectErrorStream(true);
            pb.environment().put("DEMO", demo.toString());
            Process run = pb.start();
            java.util.concurrent.CompletableFuture<byte[]> output = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return run.getInputStream().readAllBytes();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            if (!run.waitFor(120, TimeUnit.SECONDS)) {
                // Never hang the suite: end the script and the helper it started.
                run.descendants().forEach(ProcessHandle::destroyForcibly);
                run.destroyForcibly();
                throw new AssertionError("the README's curl flow did not end in 120 s");
            }
            String out = new String(output.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            assertThat(run.exitValue()).as(out).isZero();
            assertThat(out).contains("{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":1,\"owned\":true}")
                    .contains("\"structure\" : \"ok\"")
                    .contains("\"code\":\"busy\"")
                    .contains("{\"run_id\":\"run-1\",\"phase\":\"IMPORTING\",\"run_generation\":2,\"owned\":false}")
                    .contains("{\"run_id\":\"run-1\",\"phase\":\"ACTIVE\",\"run_generation\":2,\"owned\":true}")
                    .contains("\"code\":\"verification_failed\"")
                    .contains("\"runs_by_phase\":{\"ACTIVE\":1}");
            assertThat(Files.exists(demo.resolve("endpoint/authority.sock"))).as("socket removed on SIGTERM").isFalse();
        } finally {
            HelperProcess.deleteTree(demo);
        }
    }
}
