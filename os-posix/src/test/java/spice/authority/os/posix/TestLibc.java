package spice.authority.os.posix;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Test-only calls the SPI does not need (Linux): creating FIFOs, exchanging two names
 * atomically, setting special mode bits and owners of links. Throws {@link IllegalStateException}
 * with the errno on failure.
 */
@SuppressWarnings("restricted") // test-only FFM helper
final class TestLibc {

    static final int AT_FDCWD = -100;
    static final int RENAME_EXCHANGE = 1 << 1;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final MethodHandle MKFIFO = h("mkfifo", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle CHMOD = h("chmod", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle LCHOWN =
            h("lchown", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    /** Linux only: resolved on first use, so that the other calls work on macOS too. */
    private static final class LinuxOnly {
        static final MethodHandle RENAMEAT2 = h("renameat2",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
    }

    private TestLibc() {}

    static void mkfifo(Path p, int mode) {
        call("mkfifo", (a, cs) -> (int) MKFIFO.invokeExact(cs, a.allocateFrom(p.toString()), mode));
    }

    static void chmod(Path p, int mode) {
        call("chmod", (a, cs) -> (int) CHMOD.invokeExact(cs, a.allocateFrom(p.toString()), mode));
    }

    /** Changes the owner of {@code p} itself (not the target of a link). */
    static void lchown(Path p, int uid, int gid) {
        call("lchown", (a, cs) -> (int) LCHOWN.invokeExact(cs, a.allocateFrom(p.toString()), uid, gid));
    }

    /** Atomically exchanges two names (Linux {@code renameat2(RENAME_EXCHANGE)}). */
    static void exchange(MemorySegment a, MemorySegment b, MemorySegment cs) {
        try {
            int r = (int) LinuxOnly.RENAMEAT2.invokeExact(cs, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
            if (r != 0) {
                throw new IllegalStateException("renameat2 errno " + cs.get(JAVA_INT, 0));
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static MemorySegment captureSegment(Arena arena) {
        return arena.allocate(Linker.Option.captureStateLayout());
    }

    interface Call {
        int run(Arena a, MemorySegment cs) throws Throwable;
    }

    private static void call(String name, Call c) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cs = captureSegment(a);
            int r = c.run(a, cs);
            if (r != 0) {
                throw new IllegalStateException(name + " errno " + cs.get(JAVA_INT, 0));
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private static MethodHandle h(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), fd, ERRNO);
    }
}
