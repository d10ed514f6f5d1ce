package spice.authority.os;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class BoundedReadTest {
    /** A file of {@code content} read at most {@code step} bytes per call; keeps every buffer it was given. */
    private static final class FakeFile implements BoundedRead.Source<RuntimeException> {
        final byte[] content;
        final int step;
        final List<byte[]> buffers = new ArrayList<>();
        int pos;

        FakeFile(byte[] content, int step) {
            this.content = content;
            this.step = step;
        }

        @Override
        public int read(byte[] buf, int off, int len) {
            if (buffers.isEmpty() || buffers.get(buffers.size() - 1) != buf) {
                buffers.add(buf);
            }
            int n = Math.min(Math.min(len, step), content.length - pos);
            System.arraycopy(content, pos, buf, off, n);
            pos += n;
            return n;
        }
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) 7);
        return b;
    }

    @Test
    void readAll_fileGrewPastItsHint_readsAllWithinTheLimit_zeroesEveryBuffer() {
        FakeFile f = new FakeFile(bytes(1000), 64);
        byte[] out = BoundedRead.readAll(f, 10, 1000, 4096, () -> new IllegalStateException("too large"));
        assertThat(out).isEqualTo(bytes(1000));
        assertThat(f.buffers).hasSizeGreaterThan(1);
        for (byte[] b : f.buffers) {
            assertThat(b).containsOnly((byte) 0);
        }
    }

    @Test
    void readAll_oneByteOverTheLimit_isTheCallersRefusal_buffersZeroed() {
        FakeFile f = new FakeFile(bytes(101), 1000);
        assertThatThrownBy(() -> BoundedRead.readAll(f, 100, 100, 4096, () -> new IllegalStateException("too large")))
                .hasMessage("too large");
        for (byte[] b : f.buffers) {
            assertThat(b).containsOnly((byte) 0);
        }
    }

    @Test
    void readAll_emptyFileAndExactLimit() {
        assertThat(BoundedRead.readAll(new FakeFile(new byte[0], 8), 0, 10, 4096, IllegalStateException::new)).isEmpty();
        assertThat(BoundedRead.readAll(new FakeFile(bytes(10), 3), 10, 10, 2, IllegalStateException::new)).isEqualTo(bytes(10));
    }
}
