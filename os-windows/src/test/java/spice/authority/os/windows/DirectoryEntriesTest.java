package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Decoding FILE_FULL_DIR_INFO chains: whole or refused, never partial. */
class DirectoryEntriesTest {

    /** One record per name, each padded to 8 bytes and linked; the last has NextEntryOffset 0. */
    private static byte[] chain(byte[]... names) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < names.length; i++) {
            int len = DirectoryEntries.NAME_OFFSET + names[i].length;
            int padded = (len + 7) & ~7;
            ByteBuffer r = ByteBuffer.allocate(padded).order(ByteOrder.LITTLE_ENDIAN);
            r.putInt(0, i == names.length - 1 ? 0 : padded);
            r.putInt(DirectoryEntries.NAME_LENGTH_OFFSET, names[i].length);
            r.put(DirectoryEntries.NAME_OFFSET, names[i]);
            out.writeBytes(r.array());
        }
        return out.toByteArray();
    }

    private static byte[] u(String s) {
        return s.getBytes(StandardCharsets.UTF_16LE);
    }

    private static List<String> decode(byte[] buf, int filled) {
        List<String> out = new ArrayList<>();
        DirectoryEntries.decode(buf, filled, out);
        return out;
    }

    @Test
    void chain_decodedWithoutDotEntries() {
        byte[] b = chain(u("."), u(".."), u("identity.key"), u("run-ab.lock"), u("\u00e4\ud83d\ude00"));
        assertThat(decode(b, b.length)).containsExactly("identity.key", "run-ab.lock", "\u00e4\ud83d\ude00");
    }

    @Test
    void unpairedSurrogate_replaced() {
        byte[] b = chain(new byte[] {0x00, (byte) 0xd8, 'a', 0});
        List<String> names = decode(b, b.length);
        assertThat(names).hasSize(1);
        assertThat(names.getFirst()).contains("\ufffd");
    }

    @Test
    void truncatedRecord_refused() {
        byte[] b = chain(u("identity.key"), u("x"));
        // the last record is 70 bytes padded to 72: cutting 3 bytes cuts into its name
        assertThat(decode(b, b.length - 2)).containsExactly("identity.key", "x");
        assertThatThrownBy(() -> decode(b, b.length - 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> decode(b, 10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void oddOrOversizedNameLength_refused() {
        byte[] odd = chain(u("ab"));
        ByteBuffer.wrap(odd).order(ByteOrder.LITTLE_ENDIAN).putInt(DirectoryEntries.NAME_LENGTH_OFFSET, 3);
        assertThatThrownBy(() -> decode(odd, odd.length)).hasMessageContaining("bad name length");
        byte[] big = chain(u("ab"));
        ByteBuffer.wrap(big).order(ByteOrder.LITTLE_ENDIAN).putInt(DirectoryEntries.NAME_LENGTH_OFFSET, 1000);
        assertThatThrownBy(() -> decode(big, big.length)).hasMessageContaining("bad name length");
    }

    @Test
    void loopingOrMisalignedNextOffset_refused() {
        byte[] b = chain(u("a"), u("b"));
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(0, 4);
        assertThatThrownBy(() -> decode(b, b.length)).hasMessageContaining("bad next offset");
        bb.putInt(0, 8 * 1000);
        assertThatThrownBy(() -> decode(b, b.length)).hasMessageContaining("bad next offset");
    }
}
