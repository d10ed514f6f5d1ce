package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.core.Cancellation;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;
import spice.authority.snapshot.RunId;

/**
 * Temporary files left by interrupted writes (a crash between create and rename) are removed when
 * the authority opens, relative to the retained descriptor, and nothing else is: not near misses,
 * not lock or state files, not foreign files.
 */
@EnabledOnOs(OS.LINUX)
class TempSweepTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String HEX24 = "00112233445566778899aabb";
    private static final byte[] JUNK = "half a record".getBytes(StandardCharsets.UTF_8);

    private static RunAuthority open(Path leaf) throws Exception {
        return RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
    }

    @Test
    void open_removesPlantedTemporaries_keepsNearMissesAndRecords() throws Exception {
        try (TestTree tree = TestTree.create()) {
            Path leaf = tree.resolve("auth");
            try (RunAuthority a = open(leaf)) {
                a.start(new RunId("done"), NONE).terminal(RunPhase.COMPLETED, NONE);
                a.start(new RunId("open"), NONE).close();
            }
            String done = RecordCodec.fileStem("done") + ".state";
            String fresh = RecordCodec.fileStem("never-started") + ".state";
            int uid = (int) Libc.geteuid();
            List<String> swept = List.of(
                    ".identity.key." + HEX24 + ".tmp",
                    "." + done + "." + HEX24 + ".tmp",
                    "." + done + ".ffffffffffffffffffffffff.tmp",
                    "." + fresh + "." + HEX24 + ".tmp");
            for (String n : swept) {
                tree.file("auth/" + n, JUNK, 0600, uid);
            }
            tree.file("auth/." + fresh + ".aaaaaaaaaaaaaaaaaaaaaaaa.tmp", JUNK, 0400, uid); // a crash before the fchmod
            List<String> kept = new ArrayList<>(List.of(
                    "." + done + "." + HEX24.substring(2) + ".tmp",
                    "." + done + "." + HEX24.toUpperCase() + ".tmp",
                    "." + done + "." + HEX24 + ".tmp~",
                    "." + done + ".bare.tmp",
                    "." + RecordCodec.fileStem("done") + ".lock." + HEX24 + ".tmp",
                    ".endpoint.json." + HEX24 + ".tmp",
                    done + "." + HEX24 + ".tmp",
                    "notes.txt"));
            for (String n : kept) {
                tree.file("auth/" + n, JUNK, 0600, uid);
            }
            Files.createSymbolicLink(leaf.resolve(".identity.key.ffffffffffffffffffffffff.tmp"), leaf.resolve("notes.txt"));
            Files.createDirectory(leaf.resolve("." + done + ".bbbbbbbbbbbbbbbbbbbbbbbb.tmp"));
            kept.add(".identity.key.ffffffffffffffffffffffff.tmp");
            kept.add("." + done + ".bbbbbbbbbbbbbbbbbbbbbbbb.tmp");
            if (TestTree.isRoot()) {
                tree.file("auth/." + done + ".cccccccccccccccccccccccc.tmp", JUNK, 0600, TestTree.ATTACKER_UID);
                kept.add("." + done + ".cccccccccccccccccccccccc.tmp");
            }
            Map<String, String> before = tree.snapshot();

            try (RunAuthority a = open(leaf)) {
                assertThat(a.sweptTempFiles()).isEqualTo(swept.size() + 1);
                Map<String, String> expected = new TreeMap<>(before);
                swept.forEach(n -> expected.remove("auth/" + n));
                expected.remove("auth/." + fresh + ".aaaaaaaaaaaaaaaaaaaaaaaa.tmp");
                Map<String, String> after = tree.snapshot();
                after.remove("auth"); // the directory itself: its times changed with the removals
                expected.remove("auth");
                assertThat(after).isEqualTo(expected);
                for (String n : kept) {
                    assertThat(after).containsKey("auth/" + n);
                }
                assertThat(a.inspect(new RunId("done")).orElseThrow().phase()).isEqualTo(RunPhase.COMPLETED);
                assertThat(a.inspect(new RunId("open")).orElseThrow().phase()).isEqualTo(RunPhase.ACTIVE);
                assertThat(a.listRecords().records()).hasSize(2);
            }
            // Nothing was created either: no lock file for the run that never started.
            assertThat(leaf.resolve(RecordCodec.fileStem("never-started") + ".lock")).doesNotExist();
            try (RunAuthority again = open(leaf)) {
                assertThat(again.sweptTempFiles()).isZero();
            }
        }
    }

    @Test
    void open_validateOnlyDirectory_sweepsNothing() throws Exception {
        try (TestTree tree = TestTree.create()) {
            Path leaf = tree.resolve("auth");
            open(leaf).close();
            String temp = ".identity.key." + HEX24 + ".tmp";
            tree.file("auth/" + temp, JUNK, 0600, (int) Libc.geteuid());
            try (RunAuthority a = RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY), new SecureRandom())) {
                assertThat(a.sweptTempFiles()).isZero();
            }
            assertThat(leaf.resolve(temp)).exists();
        }
    }
}
