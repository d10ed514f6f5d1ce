package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.core.RunAuthority;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;

/**
 * The macOS listing ({@code fdopendir}/{@code readdir_r}/{@code closedir} on a descriptor opened
 * relative to the retained one) against the real libSystem: every kind of entry, many entries,
 * the retained directory after its path was moved and replaced, no descriptor left behind, and
 * the temporary-file sweep at open. The scratch directory lives under the real path of
 * {@code java.io.tmpdir} ({@code /var} and {@code /tmp} are symbolic links on macOS, which the walk
 * refuses), made and removed with the JDK alone.
 *
 * <p>NOT RUN HERE: macOS only; it has never run. {@code DarwinListingTest} runs the same logic
 * on Linux against a simulated kernel.
 */
@EnabledOnOs(OS.MAC)
class ListingMacTest {

    private static final String HEX24 = "0123456789abcdef01234567";

    /** A 0700 scratch directory of the user under the real temporary directory; deleted on close. */
    private record Scratch(Path base) implements AutoCloseable {
        static Scratch create() throws IOException {
            Path base = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")).toRealPath(),
                    "spice-listing-");
            Files.setPosixFilePermissions(base, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
            return new Scratch(base);
        }

        Path resolve(String relative) {
            return base.resolve(relative);
        }

        @Override
        public void close() throws IOException {
            try (Stream<Path> all = Files.walk(base)) {
                for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    private static Scratch tree() throws IOException {
        return Scratch.create();
    }

    private static Set<String> openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/dev/fd"))) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void list_everyKindOfEntry_sorted_withoutDotAndDotDot() throws Exception {
        try (Scratch tree = tree(); SecureDirectory dir = PROVIDER.open(tree.resolve("auth").toString(),
                OpenMode.CREATE_OR_VALIDATE)) {
            Path leaf = tree.resolve("auth");
            assertThat(dir.list()).isEmpty();
            dir.writeAtomically("b.state", new byte[1]);
            dir.lock("a.lock", LockMode.NON_BLOCKING).close();
            Files.createDirectory(leaf.resolve("sub.state"));
            Files.createSymbolicLink(leaf.resolve("link.state"), Path.of("/etc/passwd"));
            Files.write(leaf.resolve(".b.state." + HEX24 + ".tmp"), new byte[0]);
            String longest = "n".repeat(255);
            Files.write(leaf.resolve(longest), new byte[0]);
            assertThat(dir.list()).containsExactly(".b.state." + HEX24 + ".tmp", "a.lock", "b.state", "link.state",
                    longest, "sub.state");
        }
    }

    @Test
    void list_manyEntries_allComeBack_andNoDescriptorIsLeft() throws Exception {
        try (Scratch tree = tree(); SecureDirectory dir = PROVIDER.open(tree.resolve("auth").toString(),
                OpenMode.CREATE_OR_VALIDATE)) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 1500; i++) {
                String name = String.format("run-%064x.state", i);
                Files.write(tree.resolve("auth").resolve(name), new byte[0]);
                expected.add(name);
            }
            assertThat(dir.list()).containsExactlyElementsOf(expected);
            Set<String> before = openFds();
            for (int i = 0; i < 200; i++) {
                assertThat(dir.list()).hasSize(1500);
            }
            assertThat(openFds()).isEqualTo(before);
        }
    }

    @Test
    void list_readdirOrFdopendirFails_refusedAsAWhole_andNoDescriptorIsLeft() throws Exception {
        try (Scratch tree = tree()) {
            Path leaf = tree.resolve("auth");
            PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE).close();
            for (int i = 0; i < 1500; i++) {
                Files.write(leaf.resolve(String.format("run-%064x.state", i)), new byte[0]);
            }
            FaultySyscalls door = new FaultySyscalls();
            try (SecureDirectory d = PosixSecureDirectory.open(leaf.toString(), OpenMode.VALIDATE_ONLY, door)) {
                d.list(); // warm up
                Set<String> fds = openFds();
                for (int skip : new int[] {0, 1, 700}) {
                    door.fail(FaultySyscalls.Call.READDIR, "EIO", skip, false);
                    var e = Refusals.refusal(d::list);
                    assertThat(e.category()).isEqualTo(spice.authority.os.DirectoryRefusedException.Category.IO);
                    assertThat(e.detail()).isEqualTo("readdir_r: EIO");
                }
                door.fail(FaultySyscalls.Call.FDOPENDIR, "EMFILE");
                assertThat(Refusals.refusal(d::list).detail()).isEqualTo("fdopendir: EMFILE");
                assertThat(openFds()).isEqualTo(fds);
                assertThat(d.list()).hasSize(1500); // the directory stays usable
            }
        }
    }

    @Test
    void list_afterThePathWasMovedAndReplaced_listsTheRetainedDirectory() throws Exception {
        try (Scratch tree = tree(); SecureDirectory dir = PROVIDER.open(tree.resolve("auth").toString(),
                OpenMode.CREATE_OR_VALIDATE)) {
            Path leaf = tree.resolve("auth");
            dir.writeAtomically("mine.state", new byte[1]);
            Files.move(leaf, tree.resolve("moved"));
            Files.createDirectory(leaf);
            Files.write(leaf.resolve("planted.state"), new byte[1]);
            assertThat(dir.list()).containsExactly("mine.state");
        }
    }

    @Test
    void open_sweepsALeftoverTemporaryOfTheIdentityKey() throws Exception {
        try (Scratch tree = tree()) {
            Path leaf = tree.resolve("auth");
            RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE), new SecureRandom()).close();
            String temp = ".identity.key." + HEX24 + ".tmp";
            Files.write(leaf.resolve(temp), "half a key".getBytes(StandardCharsets.UTF_8));
            Files.setPosixFilePermissions(leaf.resolve(temp), java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            try (RunAuthority a = RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE),
                    new SecureRandom())) {
                assertThat(a.sweptTempFiles()).isOne();
                assertThat(a.listRecords().records()).isEmpty();
            }
            assertThat(leaf.resolve(temp)).doesNotExist();
        }
    }
}
