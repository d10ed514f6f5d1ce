package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;

/**
 * A directory the walk creates (the authority directory, and missing ancestors) has its entry
 * flushed in its parent before anything is written below it: a power loss after `authority init`
 * must not take the directory, identity and all, and give the next start a new scope and key.
 */
class CreatedEntriesDurableTest {

    @Test
    void open_createsMissingComponents_flushingEachParent() throws Exception {
        try (TestTree tree = TestTree.create()) {
            FaultySyscalls door = new FaultySyscalls();
            try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("a/b/auth").toString(),
                    OpenMode.CREATE_OR_VALIDATE, door)) {
                assertThat(dir.createdLeaf()).isTrue();
            }
            // One flush per created entry (a, b, auth), in the parent that holds it.
            assertThat(door.count(FaultySyscalls.Call.FSYNC_DIR)).isEqualTo(3);

            FaultySyscalls again = new FaultySyscalls();
            try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("a/b/auth").toString(),
                    OpenMode.CREATE_OR_VALIDATE, again)) {
                assertThat(dir.createdLeaf()).isFalse();
            }
            assertThat(again.count(FaultySyscalls.Call.FSYNC_DIR)).as("nothing created, nothing flushed").isZero();
        }
    }

    @Test
    void open_flushOfANewEntryFails_refused() throws Exception {
        try (TestTree tree = TestTree.create()) {
            FaultySyscalls door = new FaultySyscalls().fail(FaultySyscalls.Call.FSYNC_DIR, "EIO");
            assertThatThrownBy(() -> PosixSecureDirectory.open(tree.resolve("auth").toString(), OpenMode.CREATE_OR_VALIDATE, door))
                    .isInstanceOf(DirectoryRefusedException.class)
                    .hasMessageContaining("EIO");
        }
    }
}
