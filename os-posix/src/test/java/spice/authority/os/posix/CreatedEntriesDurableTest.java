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

            // Opened again in a mode that may create: the leaf's parent is flushed once more (an
            // earlier attempt's flush may have failed, or another process created it), nothing else.
            FaultySyscalls again = new FaultySyscalls();
            try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("a/b/auth").toString(),
                    OpenMode.CREATE_OR_VALIDATE, again)) {
                assertThat(dir.createdLeaf()).isFalse();
            }
            assertThat(again.count(FaultySyscalls.Call.FSYNC_DIR)).isEqualTo(1);

            FaultySyscalls validate = new FaultySyscalls();
            try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("a/b/auth").toString(),
                    OpenMode.VALIDATE_ONLY, validate)) {
                assertThat(dir.createdLeaf()).isFalse();
            }
            assertThat(validate.count(FaultySyscalls.Call.FSYNC_DIR)).as("validating writes nothing, flushes nothing").isZero();
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
