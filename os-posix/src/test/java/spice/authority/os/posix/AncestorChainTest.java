package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.DirectoryRefusedException.Category.IDENTITY;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.posix.Refusals.assertRefused;
import static spice.authority.os.posix.TestTree.ATTACKER_UID;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;

/**
 * {@link PosixSecureDirectory#revalidate()} proves the path through the ancestors' descriptors
 * kept from the last walk, one {@code fstatat} per component; when anything differs the full walk
 * decides. These tests watch the calls through a recording door, move ancestors under a bound
 * directory, and race revalidations against moves. (The refusals themselves, made by either
 * path, are in {@link ToctouTest}.)
 */
@EnabledOnOs(OS.LINUX)
class AncestorChainTest {

    /** A door that forwards to the C library and records each call's name, and each failure's errno. */
    private static final class Recording {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());
        final List<String> failures = new CopyOnWriteArrayList<>();
        final Syscalls door = (Syscalls) Proxy.newProxyInstance(Syscalls.class.getClassLoader(),
                new Class<?>[] {Syscalls.class}, (proxy, method, args) -> {
                    calls.add(method.getName());
                    try {
                        return method.invoke(Syscalls.LIBC, args);
                    } catch (InvocationTargetException e) {
                        if (e.getCause() instanceof PosixException pe) {
                            failures.add(method.getName() + ": " + pe.getMessage());
                        }
                        throw e.getCause();
                    }
                });

        List<String> take() {
            synchronized (calls) {
                List<String> out = List.copyOf(calls);
                calls.clear();
                return out;
            }
        }
    }

    private static Set<String> openFds() throws Exception {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    private static int components(Path p) {
        return p.getNameCount();
    }

    @Test
    void revalidate_afterBind_onlyStatsEachComponentOnce() throws Exception {
        Recording rec = new Recording();
        try (TestTree tree = TestTree.create()) {
            tree.dir("a/b", 0755);
            Path leaf = tree.resolve("a/b/auth");
            try (PosixSecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, rec.door)) {
                rec.take();
                rec.failures.clear(); // the bind's ENOENT before it created the leaf
                d.revalidate();
                d.revalidate();
                // "/" itself, then every component by name in its parent's kept descriptor
                assertThat(rec.take()).containsOnly("statx").hasSize(2 * (components(leaf) + 1));
            }
            assertThat(rec.failures).isEmpty();
        }
    }

    @Test
    void ancestorReplacedAroundTheLeaf_acceptedByTheWalk_thenProvedThroughTheNewAncestor() throws Exception {
        Recording rec = new Recording();
        try (TestTree tree = TestTree.create()) {
            tree.dir("a/b", 0755);
            Path leaf = tree.resolve("a/b/auth");
            Set<String> before = openFds();
            try (PosixSecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, rec.door)) {
                Set<String> bound = openFds();
                // The leaf keeps its inode, but "b" is now another directory.
                Files.move(tree.resolve("a/b"), tree.resolve("a/old"));
                tree.dir("a/b", 0755);
                Files.move(tree.resolve("a/old/auth"), leaf);
                rec.take();
                rec.failures.clear();

                d.revalidate();
                assertThat(rec.take()).as("the full walk decided").contains("openat");
                assertThat(openFds()).as("the old ancestors' descriptors were given back").hasSameSizeAs(bound);

                d.revalidate();
                assertThat(rec.take()).as("proved through the new ancestor").containsOnly("statx");

                // The old ancestor may go: nothing refers to it any more.
                TestTree.deleteTree(tree.resolve("a/old"));
                d.revalidate();
                d.writeAtomically("run-0.state", new byte[] {7});
                assertThat(Files.readAllBytes(leaf.resolve("run-0.state"))).containsExactly(7);
            }
            assertThat(openFds()).as("close gives back the leaf and every ancestor").isEqualTo(before);
            assertThat(rec.failures).as("only the write's look for a target not there yet")
                    .containsExactly("fstatat: fstatat: ENOENT");
        }
    }

    @Test
    void ancestorReplacedWithALookAlikeTree_refusedAsIdentity_descriptorsUnchanged() throws Exception {
        try (TestTree tree = TestTree.create()) {
            tree.dir("a/b", 0755);
            Path leaf = tree.resolve("a/b/auth");
            try (PosixSecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, Syscalls.LIBC)) {
                d.revalidate();
                Set<String> bound = openFds();
                // The leaf stays behind in the old "a"; the path now leads to a look-alike: every
                // kept link below the replaced ancestor still holds, only the replaced one differs.
                Files.move(tree.resolve("a"), tree.resolve("old"));
                tree.dir("a/b/auth", 0755);
                TestLibc.chmod(tree.resolve("a/b/auth"), 0700);
                for (int i = 0; i < 3; i++) {
                    assertRefused(tree, IDENTITY, leaf, d::revalidate);
                }
                assertThat(openFds()).isEqualTo(bound);
                TestTree.deleteTree(tree.resolve("a"));
                Files.move(tree.resolve("old"), tree.resolve("a"));
                d.revalidate();
                assertThat(openFds()).hasSameSizeAs(bound);
            }
        }
    }

    /**
     * A kept descriptor stays in the mount it was opened in. In a private mount namespace, a
     * directory whose subdirectory is another mount is bind-mounted over itself (non-recursive):
     * device and inode of every component stay the same, but the path no longer reaches the
     * leaf, and the proof must say so.
     */
    @Test
    void mountOverAnAncestor_refusedThoughDeviceAndInodeStayTheSame() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root for a mount namespace and mounts");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/unshare")), "needs unshare(1)");
        try (TestTree tree = TestTree.create(); ChildJvm child = new ChildJvm()) {
            Path srv = tree.dir("srv", 0755);
            String script = "set -e; mount -t tmpfs -o mode=0755 none '" + srv + "'; mkdir -m 0755 '" + srv + "/x'; "
                    + "mount -t tmpfs -o mode=0755 none '" + srv + "/x'; exec \"$0\" \"$@\"";
            List<String> probe = child.probeCommand("remount", srv + "/x/auth", srv.toString());
            List<String> cmd = new ArrayList<>(List.of("/usr/bin/unshare", "-m", "--propagation", "private",
                    "sh", "-c", script));
            cmd.addAll(probe);
            ChildJvm.Result r = ChildJvm.run(null, null, cmd);
            assertThat(r.out().lines().toList()).as(r.toString())
                    .containsExactly("OK", "REFUSED MISSING " + srv + "/x/auth");
        }
    }

    @Test
    void componentInStickyParentGivenAway_refusedThroughTheKeptAncestors() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to chown");
        try (TestTree tree = TestTree.create()) {
            tree.dir("shared", 01777);
            tree.dir("shared/mine", 0755);
            Path leaf = tree.resolve("shared/mine/auth");
            try (PosixSecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, Syscalls.LIBC)) {
                d.revalidate();
                Path mine = tree.resolve("shared/mine");
                TestLibc.lchown(mine, ATTACKER_UID, ATTACKER_UID);
                assertRefused(tree, OWNER, mine, d::revalidate);
                TestLibc.lchown(mine, 0, 0);
                d.revalidate();
            }
        }
    }

    @Test
    void chain_closedOnlyAfterOwnerAndLastReader() throws Exception {
        try (TestTree tree = TestTree.create()) {
            Path leaf = tree.resolve("x/auth");
            PathWalk walk = PathWalk.of(Syscalls.LIBC, leaf.toString(), Libc.geteuid());
            PathWalk.Bound bound = walk.walk(true);
            Syscalls.LIBC.close(bound.fd());
            PathWalk.Chain chain = bound.chain();
            assertThat(chain.size()).isEqualTo(components(leaf));
            assertThat(chain.acquire()).isTrue();
            chain.retire();
            assertThat(walk.stillLeadsTo(chain)).as("a reader keeps it open").isTrue();
            chain.release();
            assertThat(chain.acquire()).as("closed: no new reader").isFalse();
        }
    }

    /**
     * Four threads revalidate while the main thread keeps taking the leaf's parent away and
     * putting a new one in its place with the leaf in it: the chain is replaced under readers
     * again and again. No call may ever act on a descriptor already closed (EBADF), every
     * refusal is the honest MISSING of a moment without the leaf, and every descriptor is given
     * back.
     */
    @Test
    void revalidationsRacingAncestorReplacement_neverUseAClosedDescriptor() throws Exception {
        Recording rec = new Recording();
        try (TestTree tree = TestTree.create(Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of("/tmp"))) {
            tree.dir("p", 0755);
            Path leaf = tree.resolve("p/auth");
            Set<String> before = openFds();
            AtomicLong ok = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            List<Throwable> unexpected = new CopyOnWriteArrayList<>();
            try (PosixSecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, rec.door)) {
                rec.failures.clear();
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> readers = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    readers.add(Thread.ofPlatform().start(() -> {
                        while (!stop.get()) {
                            try {
                                d.revalidate();
                                ok.incrementAndGet();
                            } catch (DirectoryRefusedException e) {
                                if (e.category() != MISSING) {
                                    unexpected.add(e);
                                }
                                refused.incrementAndGet();
                            } catch (RuntimeException | Error e) {
                                unexpected.add(e);
                            }
                        }
                    }));
                }
                for (int round = 0; round < 400; round++) {
                    Path old = tree.resolve("old" + round);
                    Files.move(tree.resolve("p"), old);
                    tree.dir("p", 0755);
                    Files.move(old.resolve("auth"), leaf);
                    Files.delete(old);
                }
                stop.set(true);
                for (Thread t : readers) {
                    t.join();
                }
                d.revalidate();
            }
            assertThat(unexpected).isEmpty();
            assertThat(rec.failures).noneMatch(f -> f.contains("EBADF"));
            assertThat(ok.get()).isPositive();
            assertThat(openFds()).isEqualTo(before);
        }
    }
}
