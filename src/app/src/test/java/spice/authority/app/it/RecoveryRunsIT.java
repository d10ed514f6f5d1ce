package spice.authority.app.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;
import spice.authority.snapshot.proto.SnapshotLifecycle;

/**
 * Recovery of runs with real processes (issue 12): the one run-ID rule at every door of the
 * packaged helper; a lost envelope had again by another host after its owner was SIGKILLed; the
 * operator's abandon of a SUSPENDED orphan; a fenced run in the views, until a restart.
 */
class RecoveryRunsIT {
    private static final String RULE = "run_id must be a token of at most 96 UTF-8 bytes";

    private Path root;
    private HelperProcess helper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createTempDirectory("spice-recovery-");
        Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        helper = HelperProcess.start(root.resolve("authority"), root.resolve("endpoint/authority.sock"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (helper != null) {
            helper.close();
        }
        HelperProcess.deleteTree(root);
    }

    private String payloadText(String runId, long seq) {
        String base = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);
        return base.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"last_sequence\":7", "\"last_sequence\":" + seq);
    }

    private Path payload(String runId, long seq) throws IOException {
        Path f = root.resolve("p-" + Integer.toHexString(runId.hashCode()) + "-" + seq + ".json");
        Files.writeString(f, payloadText(runId, seq));
        return f;
    }

    /** Every file of the authority directory, name to content. */
    private java.util.Map<String, String> authorityContent() throws IOException {
        java.util.Map<String, String> m = new java.util.TreeMap<>();
        try (var s = Files.list(root.resolve("authority"))) {
            for (Path p : s.toList()) {
                m.put(p.getFileName().toString(), java.util.HexFormat.of().formatHex(Files.readAllBytes(p)));
            }
        }
        return m;
    }

    private String run(String runId) throws IOException {
        return helper.http().get("/v1/runs/" + runId).text();
    }

    private void awaitNotOwned(String runId) throws Exception {
        assertThat(Poll.until(java.time.Duration.ofSeconds(5), java.time.Duration.ofMillis(20), () -> run(runId),
                r -> !r.contains("\"owned\":true"))).contains("\"owned\":false");
    }

    private List<String> authorityFiles() throws IOException {
        try (var s = Files.list(root.resolve("authority"))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /**
     * A structurally valid envelope (right digest, well-shaped claim) for a payload under
     * {@code runId}; its claim is made up, so only the structure speaks for it.
     */
    private Path envelopeFor(String runId) throws IOException {
        byte[] payload = payloadText(runId, 7).getBytes(StandardCharsets.UTF_8);
        byte[] filler = new byte[32];
        java.util.Arrays.fill(filler, (byte) 0x5A);
        byte[] env = SnapshotEnvelope.newBuilder()
                .setFormat("spice.agent.snapshot/v1alpha2").setRunId(runId).setLastSequence(7)
                .setLifecycle(SnapshotLifecycle.SNAPSHOT_LIFECYCLE_SUSPENDED)
                .setPayload(ByteString.copyFrom(payload)).setSha256(ByteString.copyFrom(HmacSha256.sha256(payload)))
                .setAuthority(SnapshotAuthority.newBuilder().setScopeId(ByteString.copyFrom(filler)).setGeneration(1)
                        .setHmacSha256(ByteString.copyFrom(filler)))
                .build().toByteArray();
        Path f = root.resolve("e-" + runId.length() + ".pb");
        Files.write(f, env);
        return f;
    }

    @Test
    void runIdRule_96BytesStartsAndSuspends_97RefusedAtStartPayloadImportAndPath_withNothingCreated() throws Exception {
        String id96 = "r".repeat(96);
        String id97 = "r".repeat(97);
        try (HostProcess host = new HostProcess(helper.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            assertThat(host.send("start " + id96)).startsWith("200 ").contains("\"run_id\":\"" + id96 + "\"");
            assertThat(host.send("sign " + id96 + " " + payload(id96, 7) + " " + root.resolve("e96.pb"))).startsWith("200 envelope");
            List<String> before = authorityFiles();

            // Start: 400 naming the rule (today's helper took 97..128 bytes, which could never be suspended).
            assertThat(host.send("start " + id97)).startsWith("400 ").contains("\"code\":\"invalid_request\"").contains(RULE);
            assertThat(host.send("start " + "\\u20ac".repeat(33))).startsWith("400 ").contains(RULE);
            // A payload: P-RUNID, with the same rule text.
            assertThat(host.send("sign " + id97 + " " + payload(id97, 7) + " " + root.resolve("never.pb"))).startsWith("422 ")
                    .contains("\"rule\":\"P-RUNID\"").contains(RULE);
            // An envelope under a 97-byte ID: refused before any owner or lock is looked at.
            assertThat(host.send("import " + envelopeFor(id97))).startsWith("400 ").contains("\"code\":\"invalid_request\"")
                    .contains(RULE);
            // Paths.
            assertThat(host.send("abandon " + id97)).startsWith("400 ").contains(RULE);
            assertThat(host.send("resume " + id97)).startsWith("400 ").contains(RULE);
            UnixHttp.Response get = helper.http().get("/v1/runs/" + id97);
            assertThat(get.status()).isEqualTo(400);
            assertThat(get.text()).contains(RULE);

            assertThat(authorityFiles()).as("nothing created for a refused run ID").isEqualTo(before);
            assertThat(Files.exists(root.resolve("never.pb"))).isFalse();
            assertThat(helper.http().get("/v1/runs/" + id96).text()).contains("\"phase\":\"SUSPENDED\"");
        }
    }

    @Test
    void lostEnvelope_ownerSigkilled_anotherHostPostsTheIdenticalPayload_getsTheIdenticalEnvelope_whichImports() throws Exception {
        Path envA = root.resolve("a.pb");
        Path envLive = root.resolve("b-live.pb");
        Path envB = root.resolve("b.pb");
        Path p7 = payload("run-lost", 7);
        try (HostProcess hostA = new HostProcess(helper.socket); HostProcess hostB = new HostProcess(helper.socket)) {
            assertThat(hostA.send("session")).startsWith("200 ");
            assertThat(hostB.send("session")).startsWith("200 ");
            assertThat(hostA.send("start run-lost")).startsWith("200 ");
            assertThat(hostA.send("sign run-lost " + p7 + " " + envA)).startsWith("200 envelope");
            java.util.Map<String, String> suspended = authorityContent();

            // While A lives: B gets the same envelope, and A keeps the run.
            assertThat(hostB.send("sign run-lost " + p7 + " " + envLive)).startsWith("200 envelope");
            assertThat(Files.readAllBytes(envLive)).isEqualTo(Files.readAllBytes(envA));
            assertThat(run("run-lost")).contains("\"phase\":\"SUSPENDED\"").contains("\"owned\":true");
            assertThat(hostB.send("import " + envLive)).startsWith("409 ").contains("\"code\":\"busy\"");

            // A is killed before it could keep its envelope; B posts the identical payload.
            hostA.kill9();
            awaitNotOwned("run-lost");
            assertThat(hostB.send("sign run-lost " + p7 + " " + envB)).startsWith("200 envelope");
            assertThat(Files.readAllBytes(envB)).as("byte-identical envelope").isEqualTo(Files.readAllBytes(envA));
            // A different payload is a conflict, as from the owner.
            assertThat(hostB.send("sign run-lost " + payload("run-lost", 8) + " " + root.resolve("never.pb")))
                    .startsWith("409 ").contains("\"code\":\"state_conflict\"")
                    .contains("already suspended with a different snapshot");
            assertThat(Files.exists(root.resolve("never.pb"))).isFalse();
            assertThat(authorityContent()).as("nothing written, nothing created").isEqualTo(suspended);
            assertThat(run("run-lost")).contains("\"phase\":\"SUSPENDED\"").contains("\"run_generation\":1")
                    .contains("\"owned\":false");

            // The envelope B had again imports.
            String prepared = hostB.send("import " + envB);
            assertThat(prepared).startsWith("200 ").contains("\"next_sequence\":8");
            String imp = prepared.replaceAll(".*\"import\":\"([0-9a-f]+)\".*", "$1");
            assertThat(hostB.send("consume " + imp)).startsWith("200 ").contains("IMPORTING");
            assertThat(hostB.send("activate " + imp)).startsWith("200 ").contains("\"phase\":\"ACTIVE\"")
                    .contains("\"run_generation\":2");
            assertThat(run("run-lost")).contains("\"owned\":true");
            // Now ACTIVE: the old payload gives nothing to a session that does not own the run.
            try (HostProcess hostC = new HostProcess(helper.socket)) {
                assertThat(hostC.send("session")).startsWith("200 ");
                assertThat(hostC.send("sign run-lost " + p7 + " " + root.resolve("c.pb"))).startsWith("409 ")
                        .contains("\"code\":\"state_conflict\"").contains("is ACTIVE");
            }
        }
        byte[] env = Files.readAllBytes(envA);
        String mac = java.util.HexFormat.of().formatHex(env, env.length - 32, env.length);
        assertThat(helper.stderr()).contains("run run-lost: its SUSPENDED envelope (sequence 7) issued again")
                .doesNotContainIgnoringCase(mac);
    }

    /** {@code spice-authority ARGS} against this helper: exit code, then standard output and error. */
    private String cli(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(args));
        cmd.addAll(List.of("--socket", helper.socket.toString()));
        Process p = new ProcessBuilder(HelperProcess.command(cmd.toArray(String[]::new))).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor() + " " + out;
    }

    @Test
    void abandon_suspendedOrphan_isTombstoned_whileALiveOwnersOrAnImportsSuspendedRunIsBusy() throws Exception {
        Path envOrphan = root.resolve("orphan.pb");
        try (HostProcess doomed = new HostProcess(helper.socket); HostProcess alive = new HostProcess(helper.socket);
             HostProcess operator = new HostProcess(helper.socket)) {
            assertThat(doomed.send("session")).startsWith("200 ");
            assertThat(alive.send("session")).startsWith("200 ");
            assertThat(operator.send("session")).startsWith("200 ");
            assertThat(doomed.send("start run-orphan")).startsWith("200 ");
            assertThat(doomed.send("sign run-orphan " + payload("run-orphan", 7) + " " + envOrphan)).startsWith("200 envelope");
            assertThat(alive.send("start run-kept")).startsWith("200 ");
            assertThat(alive.send("sign run-kept " + payload("run-kept", 7) + " " + root.resolve("kept.pb"))).startsWith("200 envelope");

            // A SUSPENDED run whose owner lives holds its lock: busy, through the API and the CLI.
            assertThat(operator.send("abandon run-kept")).startsWith("409 ").contains("\"code\":\"busy\"");
            assertThat(cli("runs", "abandon", "run-kept", "--yes"))
                    .isEqualTo("1 spice-authority: busy: run run-kept is owned by a live process\n");
            assertThat(run("run-kept")).contains("\"phase\":\"SUSPENDED\"").contains("\"owned\":true");

            doomed.kill9();
            awaitNotOwned("run-orphan");
            // An import in progress holds the orphan too.
            String prepared = operator.send("import " + envOrphan);
            assertThat(prepared).startsWith("200 ");
            assertThat(operator.send("abandon run-orphan")).startsWith("409 ").contains("\"code\":\"busy\"");
            assertThat(operator.send("abort " + prepared.replaceAll(".*\"import\":\"([0-9a-f]+)\".*", "$1"))).startsWith("204");

            // No live owner, no import: the operator's abandon tombstones it.
            assertThat(cli("runs", "abandon", "run-orphan", "--yes"))
                    .isEqualTo("0 run-orphan  CANCELLED  generation 1  not owned\n");
            assertThat(run("run-orphan")).contains("\"phase\":\"CANCELLED\"");
            assertThat(operator.send("import " + envOrphan)).startsWith("403 ").contains("verification_failed");
            assertThat(operator.send("sign run-orphan " + payload("run-orphan", 7) + " " + root.resolve("again.pb")))
                    .startsWith("409 ").contains("is CANCELLED");
            assertThat(run("run-kept")).as("the live owner's run is untouched").contains("\"phase\":\"SUSPENDED\"")
                    .contains("\"owned\":true");
        }
    }

    @Test
    void fencedRun_isShownFencedAndNotOwned_untilARestartReadsTheTruthFromDisk() throws Exception {
        Path authority = root.resolve("authority");
        Path socket = helper.socket;
        Path stand = root.resolve("stand-in.state");
        Path target;
        Path mounted = null;
        try (HostProcess host = new HostProcess(helper.socket)) {
            assertThat(host.send("session")).startsWith("200 ");
            java.util.Set<Path> before = stateFiles(authority);
            assertThat(host.send("start run-fenced")).startsWith("200 ");
            java.util.Set<Path> after = stateFiles(authority);
            after.removeAll(before);
            assertThat(after).hasSize(1);
            target = after.iterator().next();
            assertThat(host.send("start run-clear")).startsWith("200 ");

            // A failure before the rename is retryable and fences nothing: the helper's files may
            // grow to 400 bytes, so the SUSPENDED record (about 540) fails at its write (EFBIG; the
            // JVM ignores SIGXFSZ). Set on the running helper, which has loaded its libraries.
            prlimit("--fsize=400:unlimited"); // soft limit only: it can be raised again
            assertThat(host.send("sign run-clear " + payload("run-clear", 7) + " " + root.resolve("c.pb")))
                    .startsWith("503 ").contains("\"code\":\"unavailable\"").contains("nothing written: write:");
            assertThat(run("run-clear")).isEqualTo("{\"run_id\":\"run-clear\",\"phase\":\"ACTIVE\",\"run_generation\":1,"
                    + "\"owned\":true}");
            prlimit("--fsize=unlimited:unlimited");
            assertThat(host.send("sign run-clear " + payload("run-clear", 7) + " " + root.resolve("c.pb")))
                    .as("the same call works once the cause is gone, without a restart").startsWith("200 envelope");

            // A failure of the rename itself is uncertain and fences the run: a file mounted over
            // the record makes rename(2) onto it fail (EBUSY) after everything before it worked.
            Files.copy(target, stand);
            mount("--bind", stand.toString(), target.toString());
            mounted = target;
            assertThat(host.send("sign run-fenced " + payload("run-fenced", 7) + " " + root.resolve("f.pb")))
                    .startsWith("500 ").contains("\"code\":\"uncertain\"");
            mount("-u", target.toString());
            mounted = null;

            // The host still holds its lease, but the run is fenced: not owned, and said so.
            assertThat(run("run-fenced")).isEqualTo("{\"run_id\":\"run-fenced\",\"phase\":\"ACTIVE\",\"run_generation\":1,"
                    + "\"owned\":false,\"fenced\":true}");
            assertThat(run("run-clear")).isEqualTo("{\"run_id\":\"run-clear\",\"phase\":\"SUSPENDED\",\"run_generation\":1,"
                    + "\"owned\":true}");
            assertThat(helper.http().get("/v1/runs").text()).contains("\"owned\":false,\"fenced\":true");
            assertThat(helper.http().get("/v1/authority").text()).contains("\"owned_runs\":1");
            assertThat(cli("runs", "show", "run-fenced")).isEqualTo("0 run-fenced  ACTIVE  generation 1  not owned  fenced\n");
            // Nobody acts on it: not its host, not an operator.
            assertThat(host.send("sign run-fenced " + payload("run-fenced", 7) + " " + root.resolve("f.pb"))).startsWith("500 ")
                    .contains("\"code\":\"uncertain\"");
            assertThat(host.send("abandon run-fenced")).startsWith("500 ").contains("\"code\":\"uncertain\"");
        } finally {
            if (mounted != null) {
                new ProcessBuilder("umount", mounted.toString()).start().waitFor(); // best effort, after a failure
            }
        }
        // A restart reads the truth from disk: the suspend never landed, and the fence is gone.
        assertThat(helper.stop()).isZero();
        helper = HelperProcess.start(authority, socket);
        assertThat(run("run-fenced")).isEqualTo("{\"run_id\":\"run-fenced\",\"phase\":\"ACTIVE\",\"run_generation\":1,"
                + "\"owned\":false}");
        assertThat(cli("runs", "abandon", "run-fenced", "--yes")).isEqualTo("0 run-fenced  CANCELLED  generation 1  not owned\n");
    }

    private static java.util.Set<Path> stateFiles(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".state")).collect(java.util.stream.Collectors.toSet());
        }
    }

    private void prlimit(String limit) throws Exception {
        Process p = new ProcessBuilder("prlimit", "--pid", Long.toString(helper.process.pid()), limit).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
    }

    private static void mount(String... args) throws Exception {
        java.util.List<String> cmd = new java.util.ArrayList<>();
        cmd.add(args[0].equals("-u") ? "umount" : "mount");
        for (String a : args) {
            if (!a.equals("-u")) {
                cmd.add(a);
            }
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
    }
}
