package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileNames;
import spice.authority.os.OpenMode;

/**
 * The write probe behind readiness ({@link PosixSecureDirectory#probeWrite}): it creates, flushes
 * and removes an empty temporary file and changes nothing else; each of its calls failing is a
 * refusal naming the call and the errno, with no file left; and the store check it serves turns
 * unusable on a real read-only remount and usable again after {@code remount,rw}, without reopening.
 */
class WriteProbeTest {

    private static Map<String, String> content(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            java.util.TreeMap<String, String> m = new java.util.TreeMap<>();
            for (Path p : s.toList()) {
                m.put(p.getFileName().toString(), java.util.HexFormat.of().formatHex(Files.readAllBytes(p)));
            }
            return m;
        }
    }

    @Test
    void probeWrite_healthyDirectory_changesNothing() throws Exception {
        try (TestTree tree = TestTree.create();
             PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("auth").toString(),
                     OpenMode.CREATE_OR_VALIDATE, Syscalls.LIBC)) {
            dir.writeAtomically("identity.key", new byte[] {1, 2, 3});
            Map<String, String> before = content(tree.resolve("auth"));
            for (int i = 0; i < 3; i++) {
                dir.probeWrite("identity.key");
            }
            assertThat(content(tree.resolve("auth"))).isEqualTo(before);
        }
    }

    @Test
    void probeWrite_eachCallFails_refusedNamingCallAndErrno_noFileLeft_thenWorksAgain() throws Exception {
        record Fault(FaultySyscalls.Call call, String errno, String said) {}
        List<Fault> faults = List.of(
                new Fault(FaultySyscalls.Call.CREATE_TEMP, "EROFS", "openat: EROFS"),
                new Fault(FaultySyscalls.Call.FSYNC_TEMP, "EIO", "fsync: EIO"),
                new Fault(FaultySyscalls.Call.CLOSE_TEMP, "EIO", "close: EIO"),
                new Fault(FaultySyscalls.Call.UNLINK, "EIO", "unlinkat: EIO"));
        for (Fault f : faults) {
            try (TestTree tree = TestTree.create()) {
                FaultySyscalls door = new FaultySyscalls();
                try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("auth").toString(),
                        OpenMode.CREATE_OR_VALIDATE, door)) {
                    dir.writeAtomically("identity.key", new byte[] {1, 2, 3});
                    Map<String, String> before = content(tree.resolve("auth"));
                    door.fail(f.call(), f.errno());
                    assertThatThrownBy(() -> dir.probeWrite("identity.key")).as(f.toString())
                            .isInstanceOfSatisfying(DirectoryRefusedException.class, e -> {
                                assertThat(e.category()).isEqualTo(DirectoryRefusedException.Category.IO);
                                assertThat(e.nothingWritten()).isFalse();
                            })
                            .hasMessage(dir.shownPath() + ": IO (a write probe failed: " + f.said() + ")");
                    assertThat(content(tree.resolve("auth"))).as(f.toString()).isEqualTo(before);
                    dir.probeWrite("identity.key"); // nothing sticks
                    assertThat(content(tree.resolve("auth"))).as(f.toString()).isEqualTo(before);
                }
            }
        }
    }

    @Test
    void probeWrite_lockOrInvalidName_orValidateOnly_refused() throws Exception {
        try (TestTree tree = TestTree.create()) {
            try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("auth").toString(),
                    OpenMode.CREATE_OR_VALIDATE, Syscalls.LIBC)) {
                assertThatThrownBy(() -> dir.probeWrite("identity.lock")).isInstanceOfSatisfying(DirectoryRefusedException.class,
                        e -> assertThat(e.category()).isEqualTo(DirectoryRefusedException.Category.NAME));
                assertThatThrownBy(() -> dir.probeWrite("../x")).isInstanceOfSatisfying(DirectoryRefusedException.class,
                        e -> assertThat(e.category()).isEqualTo(DirectoryRefusedException.Category.NAME));
            }
            try (PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("auth").toString(),
                    OpenMode.VALIDATE_ONLY, Syscalls.LIBC)) {
                assertThatThrownBy(() -> dir.probeWrite("identity.key")).isInstanceOf(IllegalStateException.class);
            }
            try (Stream<Path> s = Files.list(tree.resolve("auth"))) {
                assertThat(s.toList()).isEmpty();
            }
        }
    }

    /**
     * A real read-only remount of the file system under an open authority (a tmpfs: nothing holds
     * a file of it open for writing, so the kernel allows it): the status calls and the listing
     * still succeed, the store check does not; after {@code remount,rw} it passes again.
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void checkStore_readOnlyRemount_unavailableNamingEROFS_usableAgainAfterRemountRw() throws Exception {
        assumeTrue(TestTree.isRoot(), "needs root to mount a tmpfs");
        try (TestTree tree = TestTree.create()) {
            Path mount = tree.dir("mnt", 0755);
            ChildJvm.Result r = ChildJvm.run(null, null, List.of("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs",
                    mount.toString()));
            assumeTrue(r.exit() == 0, "cannot mount a tmpfs here: " + r);
            RunAuthority authority = null;
            try {
                authority = RunAuthority.open(PROVIDER.open(mount.resolve("auth").toString(), OpenMode.CREATE_OR_VALIDATE),
                        new SecureRandom());
                authority.checkStore();
                Map<String, String> before = content(mount.resolve("auth"));

                assertThat(remount(mount, "ro").exit()).isZero();
                RunAuthority a = authority;
                assertThatThrownBy(a::checkStore).isInstanceOf(AuthorityException.Unavailable.class)
                        .hasMessageContaining("takes no writes").hasMessageContaining("openat: EROFS");
                assertThat(authority.listRecords().records()).isEmpty(); // what the old check looked at still answers

                assertThat(remount(mount, "rw").exit()).isZero();
                authority.checkStore();
                assertThat(content(mount.resolve("auth"))).isEqualTo(before);
                assertThat(before.keySet()).noneMatch(n -> FileNames.temporaryTarget(n).isPresent());
            } finally {
                try {
                    if (authority != null) {
                        authority.close();
                    }
                } finally {
                    remount(mount, "rw");
                    if (ChildJvm.run(null, null, List.of("umount", mount.toString())).exit() != 0) {
                        ChildJvm.run(null, null, List.of("umount", "-l", mount.toString()));
                    }
                }
            }
        }
    }

    private static ChildJvm.Result remount(Path mount, String how) throws Exception {
        return ChildJvm.run(null, null, List.of("mount", "-o", "remount," + how, mount.toString()));
    }
}
