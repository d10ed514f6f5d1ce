package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.core.Cancellation;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;
import spice.authority.snapshot.RunId;

/**
 * Run IDs with characters outside the Basic Multilingual Plane, or the replacement character, get
 * their own files on disk. (A run ID that is not valid Unicode text, an unpaired UTF-16 surrogate
 * as jackson hands over for {@code "coll\ud800"}, is no {@link RunId}: the authority is never asked
 * to act on one, see {@code RunIdTextTest}.)
 */
class RunIdOnDiskTest {
    private static final Cancellation NONE = Cancellation.none();

    private TestTree tree;
    private Path leaf;
    private RunAuthority authority;

    @BeforeEach
    void setUp() throws Exception {
        tree = TestTree.create();
        tree.dir("a", 0755);
        leaf = tree.resolve("a/auth");
        authority = RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE), new SecureRandom());
    }

    @AfterEach
    void tearDown() throws IOException {
        authority.close();
        tree.close();
    }

    @Test
    void start_surrogatePairAndReplacementCharacter_createTheirOwnFiles() throws Exception {
        for (String runId : List.of("coll\uD83D\uDE00", "coll\uFFFD")) {
            authority.start(new RunId(runId), NONE).close();
            assertThat(leaf.resolve(RecordCodec.fileStem(runId) + ".state")).exists();
            assertThat(leaf.resolve(RecordCodec.fileStem(runId) + ".lock")).exists();
        }
    }
}
