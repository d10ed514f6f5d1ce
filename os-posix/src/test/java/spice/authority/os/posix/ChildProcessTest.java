package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/** Behaviour that needs a second process: umask independence and flock between processes. */
class ChildProcessTest {

    private static ChildJvm child;
    private TestTree tree;

    @BeforeAll
    static void startChildSupport() throws IOException {
        child = new ChildJvm();
    }

    @AfterAll
    static void closeChildSupport() throws IOException {
        child.close();
    }

    @BeforeEach
    void setUp() throws IOException {
        tree = TestTree.create();
    }

    @AfterEach
    void tearDown() throws IOException {
        tree.close();
    }

    private static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    @ParameterizedTest
    @ValueSource(strings = {"0000", "0277", "0077"})
    void umask_doesNotChangeAnyModeWeCreate(String umask) throws IOException {
        Path leaf = tree.resolve("a/b/auth");
        assertThat(child.probe(null, umask, "exercise", leaf.toString()).line()).isEqualTo("OK");
        assertThat(mode(tree.resolve("a"))).isEqualTo(0700);
        assertThat(mode(leaf)).isEqualTo(0700);
        assertThat(mode(leaf.resolve("run-x.state"))).isEqualTo(0600);
        assertThat(mode(leaf.resolve("run-x.lock"))).isEqualTo(0600);
        assertThat(child.probe(null, umask, "check", leaf.toString()).line()).isEqualTo("OK");
    }

    @Test
    void flock_heldByAnotherProcess_isBusyThenFree() throws Exception {
        Path leaf = tree.resolve("auth");
        Process holder = child.start(null, "hold", leaf.toString(), "identity.lock");
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("LOCKED identity.lock");
            try (SecureDirectory d = PROVIDER.open(leaf.toString(), OpenMode.VALIDATE_ONLY)) {
                DirectoryRefusedException e = Refusals.refusal(
                        () -> d.lock("identity.lock", LockMode.NON_BLOCKING).close());
                assertThat(e.category()).isEqualTo(DirectoryRefusedException.Category.BUSY);

                CompletableFuture<StableLock> waiter = CompletableFuture.supplyAsync(() -> {
                    try {
                        return d.lock("identity.lock", LockMode.BLOCKING);
                    } catch (DirectoryRefusedException x) {
                        throw new RuntimeException(x);
                    }
                });
                FlockWaiters.await(leaf.resolve("identity.lock"));
                assertThat(waiter).isNotDone();
                holder.getOutputStream().close(); // the holder releases and exits
                assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
                waiter.get(30, TimeUnit.SECONDS).close();
            }
        } finally {
            holder.destroyForcibly();
            holder.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
