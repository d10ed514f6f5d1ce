package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.ForwardingSecureDirectory;
import spice.authority.os.OpenMode;
import spice.authority.snapshot.RunId;

/**
 * {@link RunAuthority#checkStore()}, behind readiness: it reads the identity file through the
 * directory and has the directory prove that it takes a durable write (a temporary of
 * {@code identity.key}, never of a record); each failure is {@code unavailable} with the reason and
 * no secret, and nothing sticks once the cause is gone.
 */
class StoreCheckTest {
    private static final Cancellation NONE = Cancellation.none();

    /** Records the reads and probes, and fails them while told to. */
    private static final class Watched extends ForwardingSecureDirectory {
        final List<String> calls = new ArrayList<>();
        volatile boolean identityUnreadable;
        volatile boolean validateOnly;

        Watched(MemoryDirectory dir) {
            super(dir);
        }

        @Override
        public byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
            calls.add("read " + name);
            if (identityUnreadable && name.equals(RunAuthority.IDENTITY_KEY)) {
                throw new DirectoryRefusedException(Category.IO, path() + "/" + name, "openat: EIO");
            }
            return super.read(name, maxBytes);
        }

        @Override
        public void probeWrite(String target) throws DirectoryRefusedException {
            calls.add("probe " + target);
            super.probeWrite(target);
        }

        @Override
        public OpenMode openMode() {
            return validateOnly ? OpenMode.VALIDATE_ONLY : super.openMode();
        }
    }

    @Test
    void checkStore_healthy_readsTheIdentityFileAndProbesWithItsTemporary_changesNothing() throws Exception {
        MemoryDirectory mem = new MemoryDirectory();
        Watched dir = new Watched(mem);
        RunAuthority a = RunAuthority.open(dir, Fixtures.random());
        a.start(new RunId("run"), NONE).close();
        var before = mem.snapshotFiles();
        dir.calls.clear();

        a.checkStore();

        assertThat(dir.calls).containsExactly("read identity.key", "probe identity.key");
        assertThat(mem.snapshotFiles()).containsOnlyKeys(before.keySet())
                .allSatisfy((name, content) -> assertThat(content).as(name).isEqualTo(before.get(name)));
        assertThat(a.outstandingLeases()).isZero();
    }

    @Test
    void checkStore_identityFileUnreadable_unavailableNamingIt_upAgainOnceItReads() throws Exception {
        MemoryDirectory mem = new MemoryDirectory();
        Watched dir = new Watched(mem);
        RunAuthority a = RunAuthority.open(dir, Fixtures.random());
        byte[] key = mem.visibleFile(RunAuthority.IDENTITY_KEY);
        dir.identityUnreadable = true;
        assertThatThrownBy(a::checkStore).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessage("identity file unreadable: /memory/authority/identity.key: IO (openat: EIO)")
                .message().doesNotContain(HexFormat.of().formatHex(key));
        dir.identityUnreadable = false;
        a.checkStore();
    }

    @Test
    void checkStore_noWriteTaken_unavailableNamingTheCall_upAgainOnceWritesWork() throws Exception {
        MemoryDirectory mem = new MemoryDirectory();
        RunAuthority a = Fixtures.open(mem);
        mem.failProbeWrite(new DirectoryRefusedException(Category.IO, mem.path(), "a write probe failed: openat: EROFS"));
        assertThatThrownBy(a::checkStore).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessage("authority directory takes no writes: /memory/authority: IO (a write probe failed: openat: EROFS)");
        assertThat(a.outstandingLeases()).isZero();
        mem.failProbeWrite(null);
        a.checkStore();
    }

    @Test
    void checkStore_directoryBoundForValidationOnly_neverWrites() throws Exception {
        MemoryDirectory mem = new MemoryDirectory();
        Watched dir = new Watched(mem);
        RunAuthority a = RunAuthority.open(dir, Fixtures.random());
        dir.validateOnly = true;
        dir.calls.clear();
        a.checkStore();
        assertThat(dir.calls).containsExactly("read identity.key");
        assertThat(mem.probeWrites()).isZero();
    }

    @Test
    void checkStore_afterClose_isClosed() throws Exception {
        RunAuthority a = Fixtures.open(new MemoryDirectory());
        a.close();
        assertThatThrownBy(a::checkStore).isInstanceOf(AuthorityException.Closed.class);
    }
}
