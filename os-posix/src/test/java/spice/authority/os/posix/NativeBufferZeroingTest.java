package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Libc#read} and {@link Libc#write} zero their native buffer before it is freed (the
 * bytes may be key material), on success and on failure. The test hands them, through the
 * package-private allocator overloads the production entry points delegate to, an allocator
 * backed by an arena the test owns, so it can look at the native buffer after the call and
 * before the memory is freed.
 */
class NativeBufferZeroingTest {

    private static final PosixPlatform P = Libc.P;
    /** What the recording allocator fills fresh memory with: stands in for stale heap contents. */
    private static final byte POISON = (byte) 0xA5;
    private static final int LEN = 64;
    /** A stand-in key: no byte is 0 or {@link #POISON}, so neither can pass for it. */
    private static final byte[] KEY = key(LEN);

    private Path dir;

    @BeforeEach
    void createDir() throws Exception {
        dir = Files.createTempDirectory("spice-zeroing-");
    }

    @AfterEach
    void deleteDir() throws Exception {
        try (var s = Files.list(dir)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    private static byte[] key(int n) {
        byte[] k = new byte[n];
        for (int i = 0; i < n; i++) {
            k[i] = (byte) (0x11 + i); // 0x11..0x50: never 0x00 or 0xA5
        }
        return k;
    }

    /** Hands out segments of a test-owned arena, poisoned, and remembers them. */
    private static final class RecordingAllocator implements SegmentAllocator {
        private final Arena arena;
        private final List<MemorySegment> handedOut = new ArrayList<>();

        RecordingAllocator(Arena arena) {
            this.arena = arena;
        }

        @Override
        public MemorySegment allocate(long byteSize, long byteAlignment) {
            MemorySegment s = arena.allocate(byteSize, byteAlignment);
            s.fill(POISON);
            handedOut.add(s);
            return s;
        }

        /** The one segment handed out for the data (the other is the errno capture segment). */
        MemorySegment dataBuffer(int len) {
            List<MemorySegment> data = handedOut.stream().filter(s -> s.byteSize() == len).toList();
            assertThat(data).as("exactly one %d-byte buffer handed out (of %s)", len, handedOut).hasSize(1);
            return data.get(0);
        }
    }

    private static void assertAllZero(MemorySegment s) {
        byte[] bytes = s.toArray(ValueLayout.JAVA_BYTE);
        assertThat(bytes).as("native buffer after the call (still allocated)").containsOnly((byte) 0);
    }

    private Path keyFile(byte[] content) throws Exception {
        Path f = dir.resolve("key");
        Files.write(f, content);
        return f;
    }

    @Test
    void read_success_zeroesTheNativeBuffer() throws Exception {
        Path f = keyFile(KEY);
        int fd = Libc.openat(P.AT_FDCWD, f.toString(), P.O_RDONLY | P.O_CLOEXEC, 0);
        try (Arena arena = Arena.ofConfined()) {
            RecordingAllocator alloc = new RecordingAllocator(arena);
            byte[] buf = new byte[LEN];
            assertThat(Libc.read(fd, buf, 0, LEN, alloc)).isEqualTo(LEN);
            assertThat(buf).as("the key went through the native buffer").isEqualTo(KEY);
            assertAllZero(alloc.dataBuffer(LEN));
        } finally {
            Libc.close(fd);
        }
    }

    @Test
    void read_shortRead_zeroesTheWholeNativeBuffer() throws Exception {
        Path f = keyFile(Arrays.copyOf(KEY, 16));
        int fd = Libc.openat(P.AT_FDCWD, f.toString(), P.O_RDONLY | P.O_CLOEXEC, 0);
        try (Arena arena = Arena.ofConfined()) {
            RecordingAllocator alloc = new RecordingAllocator(arena);
            byte[] buf = new byte[LEN + 8];
            assertThat(Libc.read(fd, buf, 8, LEN, alloc)).isEqualTo(16);
            assertThat(Arrays.copyOfRange(buf, 8, 24)).isEqualTo(Arrays.copyOf(KEY, 16));
            assertAllZero(alloc.dataBuffer(LEN)); // the 16 bytes read and the 48 never written
        } finally {
            Libc.close(fd);
        }
    }

    @Test
    void read_failure_zeroesTheNativeBuffer() {
        try (Arena arena = Arena.ofConfined()) {
            RecordingAllocator alloc = new RecordingAllocator(arena);
            byte[] buf = new byte[LEN];
            assertThatThrownBy(() -> Libc.read(-1, buf, 0, LEN, alloc))
                    .isInstanceOfSatisfying(PosixException.class, e -> {
                        assertThat(e.call()).isEqualTo("read");
                        assertThat(e.getMessage()).isEqualTo("read: EBADF");
                    });
            // The buffer held POISON (stale contents) before the call; the finally must still run.
            assertAllZero(alloc.dataBuffer(LEN));
            assertThat(buf).containsOnly((byte) 0);
        }
    }

    @Test
    void write_success_zeroesTheNativeBuffer() throws Exception {
        Path f = keyFile(new byte[0]);
        int fd = Libc.openat(P.AT_FDCWD, f.toString(), P.O_WRONLY | P.O_TRUNC | P.O_CLOEXEC, 0);
        try (Arena arena = Arena.ofConfined()) {
            RecordingAllocator alloc = new RecordingAllocator(arena);
            byte[] src = new byte[LEN + 5];
            System.arraycopy(KEY, 0, src, 5, LEN);
            assertThat(Libc.write(fd, src, 5, LEN, alloc)).isEqualTo(LEN);
            assertAllZero(alloc.dataBuffer(LEN));
        } finally {
            Libc.close(fd);
        }
        assertThat(Files.readAllBytes(f)).as("the key went through the native buffer").isEqualTo(KEY);
    }

    @Test
    void write_failure_zeroesTheNativeBuffer() {
        try (Arena arena = Arena.ofConfined()) {
            RecordingAllocator alloc = new RecordingAllocator(arena);
            assertThatThrownBy(() -> Libc.write(-1, KEY, 0, LEN, alloc))
                    .isInstanceOfSatisfying(PosixException.class, e -> {
                        assertThat(e.call()).isEqualTo("write");
                        assertThat(e.getMessage()).isEqualTo("write: EBADF");
                    });
            // The key was copied in before write(2) failed.
            assertAllZero(alloc.dataBuffer(LEN));
        }
    }

    @Test
    void productionEntryPoints_stillReadAndWrite() throws Exception {
        Path f = keyFile(new byte[0]);
        int w = Libc.openat(P.AT_FDCWD, f.toString(), P.O_WRONLY | P.O_TRUNC | P.O_CLOEXEC, 0);
        try {
            assertThat(Libc.write(w, KEY, 0, LEN)).isEqualTo(LEN);
        } finally {
            Libc.close(w);
        }
        int r = Libc.openat(P.AT_FDCWD, f.toString(), P.O_RDONLY | P.O_CLOEXEC, 0);
        try {
            byte[] buf = new byte[LEN];
            assertThat(Libc.read(r, buf, 0, LEN)).isEqualTo(LEN);
            assertThat(buf).isEqualTo(KEY);
        } finally {
            Libc.close(r);
        }
        assertThatThrownBy(() -> Libc.read(-1, new byte[1], 0, 1)).isInstanceOf(PosixException.class);
        assertThatThrownBy(() -> Libc.write(-1, new byte[1], 0, 1)).isInstanceOf(PosixException.class);
        assertThatThrownBy(() -> Libc.read(-1, new byte[1], 1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
