package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.os.OpenMode;

/**
 * A run ID that is not valid Unicode text (an unpaired UTF-16 surrogate, as jackson hands over for
 * {@code "coll\ud800"}) is refused before anything is hashed, locked or written: no lock or state
 * file appears, and it cannot take the files of the run whose name a replacing encoder would give.
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

    private List<String> listing() throws IOException {
        try (Stream<Path> s = Files.list(leaf)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void start_unpairedSurrogate_refusedAndNoFileCreated() throws Exception {
        List<String> names = listing();
        Map<String, String> before = tree.snapshot();
        for (String runId : List.of("coll\uD800", "coll\uDC00", "\uD800coll", "co\uDC00\uD800ll")) {
            assertThatThrownBy(() -> authority.start(runId, NONE)).isInstanceOf(AuthorityException.Configuration.class);
            assertThatThrownBy(() -> authority.abandon(runId, NONE)).isInstanceOf(AuthorityException.Configuration.class);
        }
        assertThat(listing()).isEqualTo(names);
        assertThat(tree.snapshot()).as("nothing on disk changed").isEqualTo(before);
    }

    @Test
    void start_lookAlikeOfALiveRun_refusedAsInvalid_notBusyOnTheOthersLock() throws Exception {
        ActiveRun coll = authority.start("coll?", NONE);
        Map<String, String> before = tree.snapshot();
        // A replacing encoder hashed "coll\ud800" to the name of "coll?": it met that run's lock.
        assertThatThrownBy(() -> authority.start("coll\uD800", NONE)).isInstanceOf(AuthorityException.Configuration.class);
        assertThat(tree.snapshot()).isEqualTo(before);
        coll.close();
    }

    @Test
    void start_surrogatePairAndReplacementCharacter_createTheirOwnFiles() throws Exception {
        for (String runId : List.of("coll\uD83D\uDE00", "coll\uFFFD")) {
            authority.start(runId, NONE).close();
            assertThat(leaf.resolve(RecordCodec.fileStem(runId) + ".state")).exists();
            assertThat(leaf.resolve(RecordCodec.fileStem(runId) + ".lock")).exists();
        }
    }
}
