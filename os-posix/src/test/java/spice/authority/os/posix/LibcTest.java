package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The door itself: errno per call, stackless exceptions, struct decoding. */
class LibcTest {

    private static final PosixPlatform P = Libc.P;

    @Test
    void failedCall_throwsStacklessExceptionWithErrnoAndCallName() {
        assertThatThrownBy(() -> Libc.openat(P.AT_FDCWD, "/nonexistent-" + System.nanoTime(), P.O_RDONLY, 0))
                .isInstanceOfSatisfying(PosixException.class, e -> {
                    assertThat(e.errno()).isEqualTo(P.ENOENT);
                    assertThat(e.call()).isEqualTo("openat");
                    assertThat(e.getMessage()).isEqualTo("openat: ENOENT");
                    assertThat(e.getStackTrace()).isEmpty();
                });
    }

    @Test
    void errno_isCapturedPerCall_underConcurrency() throws Exception {
        // Two kinds of failing call race on two threads; each must see its own errno.
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            boolean enoent = t % 2 == 0;
            all.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 5000; i++) {
                    try {
                        if (enoent) {
                            Libc.openat(P.AT_FDCWD, "/nonexistent-spice", P.O_RDONLY, 0);
                        } else {
                            Libc.fsync(-1);
                        }
                        throw new AssertionError("call succeeded");
                    } catch (PosixException e) {
                        assertThat(e.errno()).isEqualTo(enoent ? P.ENOENT : 9 /* EBADF */);
                    }
                }
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    }

    @Test
    void fstat_decodesTheFieldsJavaSees() throws Exception {
        Path f = Files.createTempFile("spice-libc-", ".bin");
        try {
            Files.write(f, new byte[1234]);
            Path link = f.resolveSibling(f.getFileName() + ".2");
            Files.createLink(link, f);
            TestLibc.chmod(f, 0640);
            int fd = Libc.openat(P.AT_FDCWD, f.toString(), P.O_RDONLY | P.O_CLOEXEC, 0);
            try {
                FileStat st = Libc.fstat(fd);
                assertThat(st.isRegular()).isTrue();
                assertThat(st.size()).isEqualTo(1234);
                assertThat(st.permissions()).isEqualTo(0640);
                assertThat(st.nlink()).isEqualTo(2);
                assertThat(st.ino()).isEqualTo(((Number) Files.getAttribute(f, "unix:ino")).longValue());
                assertThat(st.dev()).isEqualTo(((Number) Files.getAttribute(f, "unix:dev")).longValue());
                assertThat(st.uid()).isEqualTo(((Number) Files.getAttribute(f, "unix:uid")).longValue());
                assertThat(st.gid()).isEqualTo(((Number) Files.getAttribute(f, "unix:gid")).longValue());
                assertThat(Libc.fstatat(P.AT_FDCWD, f.toString(), P.AT_SYMLINK_NOFOLLOW)).isEqualTo(st);
            } finally {
                Libc.close(fd);
                Files.delete(link);
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(org.junit.jupiter.api.condition.OS.LINUX)
    void statx_reportsWhatFstatatDoes_andTheMount() throws Exception {
        Path f = Files.createTempFile("spice-libc-", ".bin");
        try {
            Files.write(f, new byte[77]);
            for (Path p : List.of(f, f.getParent(), Path.of("/"), Path.of("/proc"))) {
                Statx x = Libc.statx(P.AT_FDCWD, p.toString(), P.AT_SYMLINK_NOFOLLOW);
                assertThat(x.stat()).as(p.toString()).isEqualTo(Libc.fstatat(P.AT_FDCWD, p.toString(), P.AT_SYMLINK_NOFOLLOW));
                assertThat(x.mountId()).as("this kernel reports mount IDs").isPositive();
            }
            int fd = Libc.openat(P.AT_FDCWD, f.toString(), P.O_RDONLY, 0);
            try {
                Statx byFd = Libc.statx(fd, "", P.AT_EMPTY_PATH);
                assertThat(byFd.sameFileAndMount(Libc.statx(P.AT_FDCWD, f.toString(), 0))).isTrue();
            } finally {
                Libc.close(fd);
            }
            // /proc is another mount than /: another mount ID, so never the same node
            Statx root = Libc.statx(P.AT_FDCWD, "/", 0);
            Statx proc = Libc.statx(P.AT_FDCWD, "/proc", 0);
            assertThat(proc.mountId()).isNotEqualTo(root.mountId());
            assertThat(proc.sameFileAndMount(root)).isFalse();
        } finally {
            Files.delete(f);
        }
    }

    @Test
    void openDirectoryNoFollow_onSymlink_failsWithEnotdirNotEloop() throws Exception {
        Path d = Files.createTempDirectory("spice-libc-");
        try {
            Path link = d.resolve("link");
            Files.createSymbolicLink(link, d);
            assertThatThrownBy(() -> Libc.openat(P.AT_FDCWD, link.toString(),
                    P.O_RDONLY | P.O_DIRECTORY | P.O_NOFOLLOW | P.O_CLOEXEC, 0))
                    .isInstanceOfSatisfying(PosixException.class, e -> assertThat(e.errno()).isEqualTo(P.ENOTDIR));
            assertThat(Libc.fstatat(P.AT_FDCWD, link.toString(), P.AT_SYMLINK_NOFOLLOW).isSymlink()).isTrue();
        } finally {
            TestTree.deleteTree(d);
        }
    }

    @Test
    void geteuid_matchesTheOwnerOfANewFile() throws Exception {
        Path f = Files.createTempFile("spice-libc-", ".bin");
        try {
            assertThat(Libc.geteuid()).isEqualTo(((Number) Files.getAttribute(f, "unix:uid")).longValue());
        } finally {
            Files.delete(f);
        }
    }
}
