package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The macOS 64-bit-inode {@code struct dirent} on Linux: the documented layout (from the macOS
 * SDK's {@code <sys/dirent.h>}, written here as literal offsets), the symbol names that select
 * it, and {@link DarwinLayout#decodeDirent} over bytes built by hand, where everything that is
 * not what {@code readdir_r} copies fails closed. That a Mac's headers agree is
 * {@code DarwinProbeTest}'s job.
 */
class DarwinDirentTest {

    private static final String[] MACS = {"macos-x86_64", "macos-aarch64"};
    private static final int NAME = 21;
    private static final int SIZE = 1048;

    private static DarwinLayout layout(String mac) {
        return DarwinLayout.of(PosixPlatform.forName(mac).orElseThrow());
    }

    /** A struct dirent buffer with the given header values and name bytes (no NUL added). */
    private static byte[] entry(int size, int reclen, int namlen, byte[] name) {
        byte[] e = new byte[size];
        ByteBuffer b = ByteBuffer.wrap(e).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, 42);
        b.putShort(16, (short) reclen);
        b.putShort(18, (short) namlen);
        e[20] = 8;
        System.arraycopy(name, 0, e, NAME, Math.min(name.length, size - NAME));
        return e;
    }

    private static byte[] good(String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        return entry(SIZE, (NAME + n.length + 1 + 7) & ~7, n.length, n);
    }

    @Test
    void bothMacTables_documentedDirentLayout_andTheirSymbols() {
        for (String mac : MACS) {
            PosixPlatform p = PosixPlatform.forName(mac).orElseThrow();
            assertThat(p.darwinConstants()).as(mac)
                    .containsEntry("sizeof.struct_dirent", 1048L)
                    .containsEntry("offsetof.dirent.d_ino", 0L).containsEntry("sizeof.dirent.d_ino", 8L)
                    .containsEntry("offsetof.dirent.d_seekoff", 8L)
                    .containsEntry("offsetof.dirent.d_reclen", 16L).containsEntry("sizeof.dirent.d_reclen", 2L)
                    .containsEntry("offsetof.dirent.d_namlen", 18L).containsEntry("sizeof.dirent.d_namlen", 2L)
                    .containsEntry("offsetof.dirent.d_type", 20L)
                    .containsEntry("offsetof.dirent.d_name", 21L).containsEntry("sizeof.dirent.d_name", 1024L);
            assertThat(p.hasDirectoryStream()).isTrue();
            assertThat(p.hasGetdents64()).isFalse();
            assertThat(layout(mac).direntSize).isEqualTo(SIZE);
        }
        // x86_64 keeps the 32-bit-inode functions under the plain names: their DIR and struct
        // dirent differ, so both the stream and the reader must be the $INODE64 ones.
        PosixPlatform x86 = PosixPlatform.forName("macos-x86_64").orElseThrow();
        assertThat(x86.fdopendirSymbol).isEqualTo("fdopendir$INODE64");
        assertThat(x86.readdirRSymbol).isEqualTo("readdir_r$INODE64");
        assertThat(x86.fstatSymbol).isEqualTo("fstat$INODE64");
        assertThat(x86.fstatatSymbol).isEqualTo("fstatat$INODE64");
        PosixPlatform arm = PosixPlatform.forName("macos-aarch64").orElseThrow();
        assertThat(arm.fdopendirSymbol).isEqualTo("fdopendir");
        assertThat(arm.readdirRSymbol).isEqualTo("readdir_r");
        assertThat(arm.fstatSymbol).isEqualTo("fstat");
        assertThat(arm.fstatatSymbol).isEqualTo("fstatat");
        for (String linux : new String[] {"linux-x86_64", "linux-aarch64"}) {
            PosixPlatform p = PosixPlatform.forName(linux).orElseThrow();
            assertThat(p.hasDirectoryStream()).isFalse();
            assertThat(p.fdopendirSymbol).isNull();
            assertThat(p.fstatSymbol).isEqualTo("fstat");
            assertThat(p.fstatatSymbol).isEqualTo("fstatat");
        }
    }

    @Test
    void decode_wellFormedEntries_giveTheirNames() {
        for (String mac : MACS) {
            DarwinLayout l = layout(mac);
            assertThat(l.decodeDirent(good("a"))).isEqualTo("a");
            assertThat(l.decodeDirent(good("."))).isEqualTo(".");
            assertThat(l.decodeDirent(good("run-00.state"))).isEqualTo("run-00.state");
            String longest = "n".repeat(1023); // MAXPATHLEN - 1: reclen is the whole struct
            assertThat(l.decodeDirent(good(longest))).isEqualTo(longest);
            assertThat(l.decodeDirent(entry(SIZE, 32, 3, new byte[] {'a', (byte) 0xFF, 'b'}))).isEqualTo("a\uFFFDb");
            // Bytes after the name's NUL are old bytes of the caller's buffer: never read.
            byte[] stale = good("ab");
            Arrays.fill(stale, NAME + 3, SIZE, (byte) 'q');
            assertThat(l.decodeDirent(stale)).isEqualTo("ab");
        }
    }

    @Test
    void decode_truncatedBuffer_failsClosed() {
        DarwinLayout l = layout("macos-aarch64");
        for (int size : new int[] {0, 20, NAME + 2, SIZE - 1}) {
            byte[] shortBuf = Arrays.copyOf(good("a"), size);
            assertThatThrownBy(() -> l.decodeDirent(shortBuf)).as("%d bytes", size)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        }
    }

    @Test
    void decode_malformedHeaderOrName_failsClosed() {
        DarwinLayout l = layout("macos-x86_64");
        byte[] abc = "abc".getBytes(StandardCharsets.UTF_8);
        Map<String, byte[]> bad = new HashMap<>();
        bad.put("empty name", entry(SIZE, 24, 0, new byte[0]));
        bad.put("name longer than MAXPATHLEN - 1", entry(SIZE, SIZE, 1024, "n".repeat(1024).getBytes()));
        bad.put("reclen shorter than header and name", entry(SIZE, NAME + 3, 3, abc));
        bad.put("reclen zero", entry(SIZE, 0, 3, abc));
        bad.put("reclen beyond the struct", entry(SIZE, SIZE + 8, 3, abc));
        bad.put("no NUL at d_name[namlen]", entry(SIZE, 32, 2, abc));
        bad.put("NUL inside the name", entry(SIZE, 32, 3, new byte[] {'a', 0, 'c'}));
        bad.put("namlen past the copied name", entry(SIZE, 48, 20, abc));
        // What the 32-bit-inode readdir_r (the plain symbol on x86_64) would copy:
        // u32 d_ino, u16 d_reclen at 4, u8 d_type at 6, u8 d_namlen at 7, d_name at 8.
        byte[] legacy = new byte[SIZE];
        ByteBuffer lb = ByteBuffer.wrap(legacy).order(ByteOrder.LITTLE_ENDIAN);
        byte[] n = "run-0123456789abcdef.state".getBytes(StandardCharsets.UTF_8);
        lb.putInt(0, 42).putShort(4, (short) 40).put(6, (byte) 8).put(7, (byte) n.length);
        System.arraycopy(n, 0, legacy, 8, n.length);
        bad.put("32-bit-inode layout", legacy);
        bad.forEach((what, e) -> assertThatThrownBy(() -> l.decodeDirent(e)).as(what)
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(x -> assertThat(x.getMessage()).doesNotContain("abc", "run-")));
    }

    @Test
    void direntTable_nameOverlappingTheHeader_isRefusedAtConstruction() throws Exception {
        var ctor = DarwinLayout.class.getDeclaredConstructor(String.class, Map.class);
        ctor.setAccessible(true);
        for (String[] change : new String[][] {
                {"offsetof.dirent.d_name", "20"}, {"sizeof.dirent.d_name", "1028"}, {"offsetof.dirent.d_namlen", "17"}}) {
            Map<String, Long> table = new HashMap<>(PosixPlatform.forName("macos-aarch64").orElseThrow().darwinConstants());
            table.put(change[0], Long.parseLong(change[1]));
            assertThatThrownBy(() -> {
                try {
                    ctor.newInstance("bad", table);
                } catch (java.lang.reflect.InvocationTargetException e) {
                    throw e.getCause();
                }
            }).as("%s = %s", change[0], change[1]).isInstanceOf(IllegalStateException.class).hasMessageContaining("dirent");
        }
    }
}
