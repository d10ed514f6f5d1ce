package spice.authority.app.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.ForwardingSecureDirectory;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.snapshot.RunId;

/**
 * A dead store is visible: when the retained directory cannot be listed (as on a filesystem that
 * answers EIO), readiness is DOWN with the reason and the run listing fails instead of being
 * short. The failure comes from a fake door in front of a real directory.
 */
class StoreHealthTest {
    @org.junit.jupiter.api.io.TempDir
    Path root;
    private RunAuthority authority;

    /** A real directory whose listing fails with EIO once {@code dead} is set, or hangs while {@code hung} is. */
    private static final class DyingDirectory extends ForwardingSecureDirectory {
        volatile boolean dead;
        volatile java.util.concurrent.CountDownLatch hung;
        final java.util.concurrent.atomic.AtomicInteger lists = new java.util.concurrent.atomic.AtomicInteger();

        DyingDirectory(SecureDirectory real) {
            super(real);
        }

        @Override
        public List<String> list() throws DirectoryRefusedException {
            lists.incrementAndGet();
            java.util.concurrent.CountDownLatch h = hung;
            if (h != null) {
                try {
                    h.await(); // as a call into a hung filesystem
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (dead) {
                throw new DirectoryRefusedException(DirectoryRefusedException.Category.IO, path(), "getdents64: EIO (injected)");
            }
            return super.list();
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        if (authority != null) {
            authority.close();
        }
    }

    @Test
    void deadStore_readinessDownWithTheReason_listingRefusedNotShort() throws Exception {
        DyingDirectory dir = new DyingDirectory(
                SecureDirectories.provider().open(root.resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE));
        authority = RunAuthority.open(dir, new SecureRandom());
        authority.start(new RunId("run-1"), Cancellation.none()).close();
        Health health = new Health();
        health.authority = authority;

        assertThat(health.store()).containsEntry("status", "UP");
        assertThat(authority.listRecords().records()).hasSize(1);

        dir.dead = true;
        Map<String, Object> check = health.store();
        assertThat(check).containsEntry("name", "store").containsEntry("status", "DOWN");
        assertThat(check.get("data").toString()).contains("cannot be listed").contains("EIO");
        assertThat(Health.body(List.of(health.authority(), check))).containsEntry("status", "DOWN");
        assertThatThrownBy(authority::listRecords).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageContaining("EIO");

        dir.dead = false;
        assertThat(health.store()).containsEntry("status", "UP");
    }

    @Test
    void hungStore_probeDoesNotWait_oneCheckAtATime_answerReusedBriefly() throws Exception {
        DyingDirectory dir = new DyingDirectory(
                SecureDirectories.provider().open(root.resolve("authority").toString(), OpenMode.CREATE_OR_VALIDATE));
        authority = RunAuthority.open(dir, new SecureRandom());
        Health health = new Health();
        health.authority = authority;
        dir.lists.set(0); // the open's own listing (its temp-file sweep) does not count
        dir.hung = new java.util.concurrent.CountDownLatch(1);

        var first = health.storeCheckResult();
        var second = health.storeCheckResult();
        // Every check started so far (on threads Health names so) waits in the hung listing.
        assertThat(spice.authority.app.it.Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(1),
                () -> dir.lists.get() > 0 && Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(t -> t.getName().equals("spice-store-check") && t.getState() != Thread.State.WAITING),
                Boolean::booleanValue)).as("the store check reached the hung listing").isTrue();
        assertThat(first).as("the check hangs off the caller's thread").isNotDone();
        assertThat(second).isNotDone();
        assertThat(dir.lists.get()).as("one check at a time").isEqualTo(1);

        dir.hung.countDown();
        dir.hung = null;
        assertThat(first.get(5, java.util.concurrent.TimeUnit.SECONDS)).containsEntry("status", "UP");
        assertThat(second.get(5, java.util.concurrent.TimeUnit.SECONDS)).containsEntry("status", "UP");
        assertThat(health.storeCheckResult().get(1, java.util.concurrent.TimeUnit.SECONDS)).containsEntry("status", "UP");
        assertThat(dir.lists.get()).as("a fresh answer is reused").isEqualTo(1);
    }
}
