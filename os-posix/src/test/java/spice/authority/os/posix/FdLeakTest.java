package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;

/** A thousand failing operations leave the process's descriptor table exactly as it was. */
@EnabledOnOs(OS.LINUX)
class FdLeakTest {

    private static Set<String> openFds() throws Exception {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void thousandFailingOpens_leaveProcSelfFdUnchanged() throws Exception {
        try (TestTree tree = TestTree.create()) {
            tree.dir("deep/a/b/c/d/e", 0755);
            tree.dir("deep/a/b/c/d/e/wrongmode", 0750);
            tree.symlink("deep/a/b/c/d/e/link", tree.resolve("deep"), 0);
            tree.dir("deep/a/b/c/d/gw", 0775);
            tree.file("deep/a/b/c/d/e/plain", new byte[0], 0644, 0);
            Path good = tree.dir("deep/a/b/c/d/e/good", 0700);
            TestLibc.mkfifo(good.resolve("fifo.state"), 0600);
            TestLibc.mkfifo(good.resolve("fifo.lock"), 0600);
            tree.dir("deep/a/b/c/d/e/good/dir.state", 0700);
            String e = tree.resolve("deep/a/b/c/d/e").toString();
            List<String> failingPaths = List.of(
                    e + "/wrongmode", e + "/link/x", e + "/plain/y", tree.resolve("deep/a/b/c/d/gw/z").toString(),
                    e + "/good/", e + "/good/fifo.state");
            try (SecureDirectory d = PROVIDER.open(good.toString(), OpenMode.CREATE_OR_VALIDATE)) {
                // warm up every code path once so class loading opens no descriptors during the count
                runFailures(failingPaths, d, 1);
                Set<String> before = openFds();
                runFailures(failingPaths, d, 1000);
                assertThat(openFds()).isEqualTo(before);
            }
        }
    }

    private static void runFailures(List<String> paths, SecureDirectory d, int n) {
        for (int i = 0; i < n; i++) {
            String path = paths.get(i % paths.size());
            OpenMode mode = i % 2 == 0 ? OpenMode.VALIDATE_ONLY : OpenMode.CREATE_OR_VALIDATE;
            Refusals.refusal(() -> PROVIDER.open(path, mode).close());
            Refusals.refusal(() -> d.read("fifo.state", 10));
            Refusals.refusal(() -> d.read("dir.state", 10));
            Refusals.refusal(() -> d.lock("fifo.lock", LockMode.NON_BLOCKING).close());
            Refusals.refusal(() -> d.writeAtomically("dir.state", new byte[1]));
        }
    }
}
