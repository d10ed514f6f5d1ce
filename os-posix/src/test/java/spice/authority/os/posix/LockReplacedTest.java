package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/** A lock file replaced while a blocking lock waits on it: the lock ends up on the file the name names. */
class LockReplacedTest {
    @Test
    void aLockWaitingOnAFileThatLostItsName_locksTheNewFileInstead() throws Exception {
        try (TestTree tree = TestTree.create()) {
            Path leaf = tree.dir("auth", 0700);
            try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE)) {
                StableLock first = d.lock("run.lock", LockMode.NON_BLOCKING);
                CompletableFuture<StableLock> waiter = CompletableFuture.supplyAsync(() -> {
                    try {
                        return d.lock("run.lock", LockMode.BLOCKING);
                    } catch (DirectoryRefusedException e) {
                        throw new RuntimeException(e);
                    }
                });
                FlockWaiters.await(leaf.resolve("run.lock")); // the waiter has opened the old file and waits in flock
                assertThat(waiter).isNotDone();
                // The directory's owner replaces the lock file; then the first holder lets go.
                Path replacement = leaf.resolve("replacement");
                Files.writeString(replacement, "");
                Files.setPosixFilePermissions(replacement, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
                Files.move(replacement, leaf.resolve("run.lock"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                Object newInode = Files.getAttribute(leaf.resolve("run.lock"), "unix:ino", LinkOption.NOFOLLOW_LINKS);
                first.close();
                try (StableLock second = waiter.get(30, TimeUnit.SECONDS)) {
                    assertThat(second.identity().inode()).isEqualTo(((Number) newInode).longValue());
                    assertThat(second.identity()).isNotEqualTo(first.identity());
                }
            }
        }
    }
}
