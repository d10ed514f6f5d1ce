package spice.authority.os.posix;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;

/**
 * The one door from os-posix to the C library. Nothing else in this module touches
 * {@code java.lang.foreign}.
 *
 * <p>Each method is one C call, named verbatim, with its prototype as Javadoc. Every call
 * captures its own {@code errno} through {@code Linker.Option.captureCallState("errno")} into
 * a segment private to that call (never a shared static: the helper is multi-threaded), and
 * a failure is thrown as a stackless {@link PosixException}. {@code EINTR} is retried here,
 * except for {@code close}, where a retry could close a descriptor another thread has just
 * been given. Strings are passed as NUL-terminated UTF-8; callers have rejected NUL bytes.
 *
 * <p>Class initialisation fails on a platform without a table in {@link PosixPlatform};
 * callers check {@link PosixPlatform#current()} first.
 */
@SuppressWarnings("restricted") // the one door: native access is its purpose
final class Libc {

    static final PosixPlatform P = PosixPlatform.current()
            .orElseThrow(() -> new IllegalStateException("os-posix has no table for this platform"));

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");
    private static final ValueLayout MODE_T = P.sizeofModeT == 2 ? JAVA_SHORT : JAVA_INT;

    private static final MethodHandle OPENAT = downcall("openat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(3));
    private static final MethodHandle FSTAT = downcall(P.fstatSymbol,
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle FSTATAT = downcall(P.fstatatSymbol,
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle MKDIRAT = modeAsInt(downcall("mkdirat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, MODE_T)), 3);
    private static final MethodHandle FCHMOD = modeAsInt(downcall("fchmod",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, MODE_T)), 2);
    private static final MethodHandle RENAMEAT = downcall("renameat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle UNLINKAT = downcall("unlinkat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle FSYNC = downcall("fsync",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FLOCK = downcall("flock",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = downcall("close",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle READ = downcall("read",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle WRITE = downcall("write",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle GETEUID = LINKER.downcallHandle(
            LIBC.find("geteuid").orElseThrow(), FunctionDescriptor.of(JAVA_INT));

    /**
     * Handles that exist only on Linux (or whose types are Linux's), resolved on first use
     * so that {@code Libc} still initialises on macOS.
     */
    private static final class LinuxOnly {
        /** glibc reads every variadic argument of {@code syscall} as a {@code long}. */
        static final MethodHandle SYSCALL_2 = downcall("syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
        /** {@code syscall(number, int, void *, size_t)}: the pointer is a full 64-bit variadic word. */
        static final MethodHandle SYSCALL_INT_PTR_LEN = downcall("syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
        static final MethodHandle EVENTFD = downcall("eventfd",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        /** {@code int fstatfs(int fd, struct statfs *buf);} */
        static final MethodHandle FSTATFS = downcall("fstatfs",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        /** {@code nfds_t} is {@code unsigned long} on Linux (an {@code unsigned int} on macOS). */
        static final MethodHandle POLL = downcall("poll",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));

        private LinuxOnly() {}
    }

    /**
     * {@code int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf);}
     * in a holder of its own, and null where the C library lacks it (glibc before 2.28, musl before
     * 1.2.5): a missing symbol then means no kept ancestor chain (every proof is the full walk),
     * never a failed {@link LinuxOnly}, whose eventfd, poll and syscall handles everything needs.
     */
    private static final class StatxHandle {
        static final MethodHandle STATX = LIBC.find("statx").isPresent()
                ? downcall("statx", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS))
                : null;

        private StatxHandle() {}
    }

    /**
     * Handles that exist only on macOS, resolved on first use so that {@code Libc} still
     * initialises on Linux (which has no {@code kqueue} and no {@code proc_pidinfo}).
     * NOT RUN HERE: linked and called only on macOS.
     */
    private static final class DarwinOnly {
        static final DarwinLayout LAYOUT = DarwinLayout.of(P);
        static final MethodHandle KQUEUE = downcall("kqueue", FunctionDescriptor.of(JAVA_INT));
        static final MethodHandle KEVENT = downcall("kevent",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
        /** In libproc, re-exported by libSystem. */
        static final MethodHandle PROC_PIDINFO = downcall("proc_pidinfo",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, JAVA_INT));
        /** {@code socklen_t} is a {@code uint32_t} on macOS. */
        static final MethodHandle GETSOCKOPT = downcall("getsockopt",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        /** {@code fdopendir$INODE64} and {@code readdir_r$INODE64} on x86_64 ({@link PosixPlatform}). */
        static final MethodHandle FDOPENDIR = downcall(P.fdopendirSymbol,
                FunctionDescriptor.of(ADDRESS, JAVA_INT));
        static final MethodHandle READDIR_R = downcall(P.readdirRSymbol,
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle CLOSEDIR = downcall("closedir",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));

        private DarwinOnly() {}
    }

    /** {@code struct pollfd { int fd; short events; short revents; };} */
    private static final long POLLFD_SIZE = 8;
    private static final long POLLFD_EVENTS = 4;
    private static final long POLLFD_REVENTS = 6;

    private Libc() {}

    /**
     * {@code int openat(int dirfd, const char *pathname, int flags, ... );} where the variadic
     * argument is {@code mode_t mode} (promoted to {@code int}).
     */
    static int openat(int dirfd, String pathname, int flags, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment path = arena.allocateFrom(pathname);
            while (true) {
                int r = (int) OPENAT.invokeExact(cs, dirfd, path, flags, mode);
                if (r >= 0) {
                    return r;
                }
                retryOrThrow(cs, "openat");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int fstat(int fd, struct stat *statbuf);} */
    static FileStat fstat(int fd) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment buf = arena.allocate(P.statSize, 8);
            while ((int) FSTAT.invokeExact(cs, fd, buf) != 0) {
                retryOrThrow(cs, "fstat");
            }
            return decode(buf);
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int fstatat(int dirfd, const char *pathname, struct stat *statbuf, int flags);} */
    static FileStat fstatat(int dirfd, String pathname, int flags) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment path = arena.allocateFrom(pathname);
            MemorySegment buf = arena.allocate(P.statSize, 8);
            while ((int) FSTATAT.invokeExact(cs, dirfd, path, buf, flags) != 0) {
                retryOrThrow(cs, "fstatat");
            }
            return decode(buf);
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int mkdirat(int dirfd, const char *pathname, mode_t mode);} */
    static void mkdirat(int dirfd, String pathname, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment path = arena.allocateFrom(pathname);
            while ((int) MKDIRAT.invokeExact(cs, dirfd, path, mode) != 0) {
                retryOrThrow(cs, "mkdirat");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int fchmod(int fd, mode_t mode);} */
    static void fchmod(int fd, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while ((int) FCHMOD.invokeExact(cs, fd, mode) != 0) {
                retryOrThrow(cs, "fchmod");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);} */
    static void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment from = arena.allocateFrom(oldpath);
            MemorySegment to = arena.allocateFrom(newpath);
            // Never retried, not even on EINTR: a network or FUSE file system may answer EINTR and
            // still carry the rename out, and the retry would then report some other errno.
            if ((int) RENAMEAT.invokeExact(cs, olddirfd, from, newdirfd, to) != 0) {
                throw new PosixException((int) ERRNO.get(cs, 0L), "renameat");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int unlinkat(int dirfd, const char *pathname, int flags);} */
    static void unlinkat(int dirfd, String pathname, int flags) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment path = arena.allocateFrom(pathname);
            while ((int) UNLINKAT.invokeExact(cs, dirfd, path, flags) != 0) {
                retryOrThrow(cs, "unlinkat");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int fsync(int fd);} */
    static void fsync(int fd) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while ((int) FSYNC.invokeExact(cs, fd) != 0) {
                retryOrThrow(cs, "fsync");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int flock(int fd, int operation);} */
    static void flock(int fd, int operation) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while ((int) FLOCK.invokeExact(cs, fd, operation) != 0) {
                retryOrThrow(cs, "flock");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int close(int fd);}
     *
     * <p>Not retried on {@code EINTR}: Linux has released the descriptor by then, and a retry
     * could close a descriptor another thread has just been given. {@code EINTR} is
     * therefore reported as success.
     */
    static void close(int fd) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            if ((int) CLOSE.invokeExact(cs, fd) != 0) {
                int errno = (int) ERRNO.get(cs, 0L);
                if (errno != P.EINTR) {
                    throw new PosixException(errno, "close");
                }
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code ssize_t read(int fd, void *buf, size_t count);} Copies into {@code buf[off, off+len)}. */
    static int read(int fd, byte[] buf, int off, int len) throws PosixException {
        java.util.Objects.checkFromIndexSize(off, len, buf.length);
        try (Arena arena = Arena.ofConfined()) {
            return read(fd, buf, off, len, arena);
        }
    }

    /**
     * {@link #read(int, byte[], int, int)} with its native memory taken from {@code allocator},
     * which the caller frees afterwards; for tests, which inspect that memory before it is freed.
     */
    static int read(int fd, byte[] buf, int off, int len, SegmentAllocator allocator) throws PosixException {
        java.util.Objects.checkFromIndexSize(off, len, buf.length);
        try {
            MemorySegment cs = allocator.allocate(CAPTURE);
            MemorySegment native_ = allocator.allocate(Math.max(len, 1));
            try {
                while (true) {
                    long r = (long) READ.invokeExact(cs, fd, native_, (long) len);
                    if (r >= 0) {
                        MemorySegment.copy(native_, ValueLayout.JAVA_BYTE, 0, buf, off, (int) r);
                        return (int) r;
                    }
                    retryOrThrow(cs, "read");
                }
            } finally {
                native_.fill((byte) 0); // SECURITY: the bytes may be a key; freed native memory keeps them otherwise
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code ssize_t write(int fd, const void *buf, size_t count);} Writes from {@code buf[off, off+len)}. */
    static int write(int fd, byte[] buf, int off, int len) throws PosixException {
        java.util.Objects.checkFromIndexSize(off, len, buf.length);
        try (Arena arena = Arena.ofConfined()) {
            return write(fd, buf, off, len, arena);
        }
    }

    /** {@link #write(int, byte[], int, int)} with its native memory taken from {@code allocator}; as for read. */
    static int write(int fd, byte[] buf, int off, int len, SegmentAllocator allocator) throws PosixException {
        java.util.Objects.checkFromIndexSize(off, len, buf.length);
        try {
            MemorySegment cs = allocator.allocate(CAPTURE);
            MemorySegment native_ = allocator.allocate(Math.max(len, 1));
            try {
                MemorySegment.copy(buf, off, native_, ValueLayout.JAVA_BYTE, 0, len);
                while (true) {
                    long r = (long) WRITE.invokeExact(cs, fd, native_, (long) len);
                    if (r >= 0) {
                        return (int) r;
                    }
                    retryOrThrow(cs, "write");
                }
            } finally {
                native_.fill((byte) 0); // SECURITY: as in read
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int pidfd_open(pid_t pid, unsigned int flags);} (Linux 5.3), made as
     * {@code syscall(SYS_pidfd_open, pid, flags)} so that it does not need glibc 2.36. The
     * descriptor is always close-on-exec.
     */
    static int pidfd_open(int pid, int flags) throws PosixException {
        if (P.SYS_pidfd_open < 0) {
            throw new UnsupportedOperationException("no pidfd_open on " + P.name);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while (true) {
                long r = (long) LinuxOnly.SYSCALL_2.invokeExact(cs, P.SYS_pidfd_open, (long) pid,
                        Integer.toUnsignedLong(flags));
                if (r >= 0) {
                    return Math.toIntExact(r);
                }
                retryOrThrow(cs, "pidfd_open");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code ssize_t getdents64(int fd, void *dirp, size_t count);} (Linux), made as
     * {@code syscall(SYS_getdents64, fd, dirp, count)} so that it does not need glibc 2.30.
     * Fills {@code buf} with whole {@code struct linux_dirent64} records (layout in
     * {@link PosixPlatform}) and returns how many bytes it filled: 0 at the end of the
     * directory. Unlike {@code readdir(3)}, whose end and whose failure both return NULL and
     * differ only in an {@code errno} that would have to be zeroed before the call, a failure
     * here is -1 with the errno captured for this call: an I/O error can never pass for the end
     * of the directory.
     */
    static int getdents64(int fd, byte[] buf) throws PosixException {
        if (!P.hasGetdents64()) {
            throw new UnsupportedOperationException("no getdents64 on " + P.name);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment native_ = arena.allocate(Math.max(buf.length, 1), 8);
            while (true) {
                long r = (long) LinuxOnly.SYSCALL_INT_PTR_LEN.invokeExact(cs, P.SYS_getdents64, (long) fd, native_,
                        (long) buf.length);
                if (r >= 0) {
                    MemorySegment.copy(native_, ValueLayout.JAVA_BYTE, 0, buf, 0, (int) r);
                    return (int) r;
                }
                retryOrThrow(cs, "getdents64");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * Linux {@code fstatfs(2)}: the {@code f_type} magic number of the file system holding
     * {@code fd} (the first member of {@code struct statfs}, a {@code long} on 64-bit Linux).
     *
     * @throws UnsupportedOperationException on other platforms
     */
    static long filesystemType(int fd) throws PosixException {
        if (!P.name.startsWith("linux-")) {
            throw new UnsupportedOperationException("no Linux fstatfs on " + P.name);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment buf = arena.allocate(256, 8); // struct statfs is 120 bytes on 64-bit Linux
            while ((int) LinuxOnly.FSTATFS.invokeExact(cs, fd, buf) != 0) {
                retryOrThrow(cs, "fstatfs");
            }
            return buf.get(ValueLayout.JAVA_LONG, 0);
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** The {@code statx} fields {@link #statx} needs: type, mode, nlink, uid, gid, ino, size. */
    private static final int STATX_NEEDED = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x100 | 0x200;

    /**
     * Linux {@code statx(2)}, asking for the basic fields and the mount ID. The device is turned
     * into a {@code dev_t} as glibc's {@code makedev} does, so the identity equals the one
     * {@link #fstat} reports for the same file.
     *
     * @throws PosixException {@code EOPNOTSUPP} when the kernel did not fill a field the status
     *     needs (an owner that is not known must never read as root's)
     * @throws UnsupportedOperationException where there is no {@code statx} (macOS)
     */
    static Statx statx(int dirfd, String pathname, int flags) throws PosixException {
        PosixPlatform.StatxLayout l = P.statx;
        MethodHandle statx = l == null ? null : StatxHandle.STATX;
        if (statx == null) {
            throw new UnsupportedOperationException("no statx on " + P.name + (l == null ? "" : " in this C library"));
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment path = arena.allocateFrom(pathname);
            MemorySegment buf = arena.allocate(l.size(), 8);
            while ((int) statx.invokeExact(cs, dirfd, path, flags, STATX_NEEDED | P.STATX_MNT_ID, buf) != 0) {
                retryOrThrow(cs, "statx");
            }
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buf.toArray(ValueLayout.JAVA_BYTE))
                    .order(java.nio.ByteOrder.nativeOrder());
            int mask = b.getInt(l.mask());
            if ((mask & STATX_NEEDED) != STATX_NEEDED) {
                throw new PosixException(P.errnoValue("EOPNOTSUPP"), "statx");
            }
            long major = Integer.toUnsignedLong(b.getInt(l.devMajor()));
            long minor = Integer.toUnsignedLong(b.getInt(l.devMinor()));
            long dev = ((major & 0xfffff000L) << 32) | ((major & 0xfffL) << 8)
                    | ((minor & 0xffffff00L) << 12) | (minor & 0xffL);
            FileStat stat = new FileStat(dev, b.getLong(l.ino()), Short.toUnsignedInt(b.getShort(l.mode())),
                    Integer.toUnsignedLong(b.getInt(l.nlink())), Integer.toUnsignedLong(b.getInt(l.uid())),
                    Integer.toUnsignedLong(b.getInt(l.gid())), b.getLong(l.fileSize()));
            return new Statx(stat, (mask & P.STATX_MNT_ID) != 0 ? b.getLong(l.mountId()) : -1);
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int eventfd(unsigned int initval, int flags);} (Linux) */
    static int eventfd(int initval, int flags) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while (true) {
                int r = (int) LinuxOnly.EVENTFD.invokeExact(cs, initval, flags);
                if (r >= 0) {
                    return r;
                }
                retryOrThrow(cs, "eventfd");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout);} with
     * {@code struct pollfd { int fd; short events; short revents; };} spread over three
     * arrays of equal length; {@code revents} is filled in. Retried on {@code EINTR} with the
     * same timeout (callers here pass -1: wait without limit).
     *
     * @return the number of entries with non-zero {@code revents}
     */
    static int poll(int[] fds, short[] events, short[] revents, int timeout) throws PosixException {
        int n = fds.length;
        if (events.length != n || revents.length != n) {
            throw new IllegalArgumentException("fds, events and revents differ in length");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment pfds = arena.allocate(POLLFD_SIZE * Math.max(n, 1), 8);
            for (int i = 0; i < n; i++) {
                pfds.set(JAVA_INT, i * POLLFD_SIZE, fds[i]);
                pfds.set(JAVA_SHORT, i * POLLFD_SIZE + POLLFD_EVENTS, events[i]);
                pfds.set(JAVA_SHORT, i * POLLFD_SIZE + POLLFD_REVENTS, (short) 0);
            }
            while (true) {
                int r = (int) LinuxOnly.POLL.invokeExact(cs, pfds, (long) n, timeout);
                if (r >= 0) {
                    for (int i = 0; i < n; i++) {
                        revents[i] = pfds.get(JAVA_SHORT, i * POLLFD_SIZE + POLLFD_REVENTS);
                    }
                    return r;
                }
                retryOrThrow(cs, "poll");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code int kqueue(void);} (macOS) A kqueue is not inherited by a child of fork(2). */
    static int kqueue() throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while (true) {
                int r = (int) DarwinOnly.KQUEUE.invokeExact(cs);
                if (r >= 0) {
                    return r;
                }
                retryOrThrow(cs, "kqueue");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int kevent(int kq, const struct kevent *changelist, int nchanges, struct kevent
     * *eventlist, int nevents, const struct timespec *timeout);} (macOS) The structs are byte
     * arrays in the {@link DarwinLayout} of this platform; {@code timeoutNanos} below zero
     * passes a NULL timeout (wait without limit). Retried on {@code EINTR} (the changes were
     * applied before the wait; applying {@code EV_ADD} again is idempotent).
     *
     * @return the number of events written to {@code eventlist}
     */
    static int kevent(int kq, byte[] changelist, int nchanges, byte[] eventlist, int nevents, long timeoutNanos)
            throws PosixException {
        DarwinLayout l = DarwinOnly.LAYOUT;
        java.util.Objects.checkFromIndexSize(0, (long) nchanges * l.keventSize, changelist.length);
        java.util.Objects.checkFromIndexSize(0, (long) nevents * l.keventSize, eventlist.length);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment changes = arena.allocate(Math.max(changelist.length, 1), 8);
            MemorySegment.copy(changelist, 0, changes, ValueLayout.JAVA_BYTE, 0, changelist.length);
            MemorySegment events = arena.allocate(Math.max(eventlist.length, 1), 8);
            MemorySegment timeout = MemorySegment.NULL;
            if (timeoutNanos >= 0) {
                timeout = arena.allocate(l.timespecSize, 8);
                timeout.set(JAVA_LONG, 0, timeoutNanos / 1_000_000_000L);
                timeout.set(JAVA_LONG, 8, timeoutNanos % 1_000_000_000L);
            }
            while (true) {
                int r = (int) DarwinOnly.KEVENT.invokeExact(cs, kq, changes, nchanges, events, nevents, timeout);
                if (r >= 0) {
                    MemorySegment.copy(events, ValueLayout.JAVA_BYTE, 0, eventlist, 0, r * l.keventSize);
                    return r;
                }
                retryOrThrow(cs, "kevent");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buffer, int buffersize);}
     * (macOS, libproc) Returns the number of bytes filled in; the C function returns 0 (or -1)
     * on failure with {@code errno} set, which is thrown (an errno of 0 included: unknown).
     */
    static int proc_pidinfo(int pid, int flavor, long arg, byte[] buffer) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment buf = arena.allocate(Math.max(buffer.length, 1), 8);
            while (true) {
                int r = (int) DarwinOnly.PROC_PIDINFO.invokeExact(cs, pid, flavor, arg, buf, buffer.length);
                if (r > 0) {
                    int n = Math.min(r, buffer.length);
                    MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, 0, buffer, 0, n);
                    return r;
                }
                retryOrThrow(cs, "proc_pidinfo");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int getsockopt(int socket, int level, int option_name, void *option_value,
     * socklen_t *option_len);} with {@code *option_len = optval.length} on entry; copies the
     * value into {@code optval} and returns the {@code option_len} the call left.
     */
    static int getsockopt(int fd, int level, int optname, byte[] optval) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            MemorySegment val = arena.allocate(Math.max(optval.length, 1), 8);
            MemorySegment len = arena.allocate(JAVA_INT);
            while (true) {
                len.set(JAVA_INT, 0, optval.length);
                if ((int) DarwinOnly.GETSOCKOPT.invokeExact(cs, fd, level, optname, val, len) == 0) {
                    int n = len.get(JAVA_INT, 0);
                    MemorySegment.copy(val, ValueLayout.JAVA_BYTE, 0, optval, 0, Math.min(Math.max(n, 0), optval.length));
                    return n;
                }
                retryOrThrow(cs, "getsockopt");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code DIR *fdopendir(int fd);} (macOS; {@code fdopendir$INODE64} on x86_64) Returns the
     * stream's address; on success the stream owns {@code fd}. NOT RUN HERE: macOS only.
     */
    static long fdopendir(int fd) throws PosixException {
        if (!P.hasDirectoryStream()) {
            throw new UnsupportedOperationException("no fdopendir table on " + P.name);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            while (true) {
                MemorySegment dir = (MemorySegment) DarwinOnly.FDOPENDIR.invokeExact(cs, fd);
                if (dir.address() != 0) {
                    return dir.address();
                }
                retryOrThrow(cs, "fdopendir"); // on failure fd is still the caller's: a retry is safe
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int readdir_r(DIR *dirp, struct dirent *entry, struct dirent **result);} (macOS;
     * {@code readdir_r$INODE64} on x86_64) Copies the next entry into {@code entry[0,
     * sizeof(struct dirent))}; false at the end ({@code *result == NULL}). The failure is the
     * returned error number, not {@code errno}: {@code readdir(3)} signals both its end and its
     * failure with NULL and differs only in an {@code errno} that would have to be zeroed
     * before the call, which a downcall cannot do reliably (the JVM may set {@code errno} on this
     * thread between two downcalls). NOT RUN HERE: macOS only.
     */
    static boolean readdir_r(long dir, byte[] entry) throws PosixException {
        DarwinLayout l = DarwinOnly.LAYOUT;
        if (dir == 0 || entry.length < l.direntSize) {
            throw new IllegalArgumentException("readdir_r needs a stream and " + l.direntSize + " bytes");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment native_ = arena.allocate(l.direntSize, 8); // zeroed: no stale name bytes
            MemorySegment result = arena.allocate(ADDRESS);
            MemorySegment stream = MemorySegment.ofAddress(dir);
            MemorySegment cs = arena.allocate(CAPTURE); // unused: the error is the return value
            while (true) {
                int r = (int) DarwinOnly.READDIR_R.invokeExact(cs, stream, native_, result);
                if (r == 0) {
                    MemorySegment got = result.get(ADDRESS, 0);
                    if (got.address() == 0) {
                        return false;
                    }
                    if (got.address() != native_.address()) {
                        // SECURITY: readdir_r returns its entry argument; anything else is not read.
                        throw new PosixException(P.errnoValue("EIO"), "readdir_r (unexpected result pointer)");
                    }
                    MemorySegment.copy(native_, ValueLayout.JAVA_BYTE, 0, entry, 0, l.direntSize);
                    return true;
                }
                if (r != P.EINTR) {
                    throw new PosixException(r, "readdir_r");
                }
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /**
     * {@code int closedir(DIR *dirp);} (macOS) Closes the stream and the descriptor it owns;
     * never retried: the stream is freed whatever the result. NOT RUN HERE: macOS only.
     */
    static void closedir(long dir) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = arena.allocate(CAPTURE);
            if ((int) DarwinOnly.CLOSEDIR.invokeExact(cs, MemorySegment.ofAddress(dir)) != 0) {
                throw new PosixException((int) ERRNO.get(cs, 0L), "closedir");
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    /** {@code uid_t geteuid(void);} Always succeeds; the unsigned uid. */
    static long geteuid() {
        try {
            return Integer.toUnsignedLong((int) GETEUID.invokeExact());
        } catch (Throwable t) {
            throw linkageBug(t);
        }
    }

    private static void retryOrThrow(MemorySegment cs, String call) throws PosixException {
        int errno = (int) ERRNO.get(cs, 0L);
        if (errno != P.EINTR) {
            throw new PosixException(errno, call);
        }
    }

    /**
     * Decodes a {@code struct stat} from a heap copy: one bulk copy, then plain buffer reads. (Read
     * field by field through {@code MemorySegment.get}, the decoding inlined three memory-access
     * paths and took more than the 1 MiB the app-image allows one JIT compilation, so it stayed
     * interpreted on every stat.)
     */
    private static FileStat decode(MemorySegment buf) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buf.toArray(ValueLayout.JAVA_BYTE))
                .order(java.nio.ByteOrder.nativeOrder());
        return new FileStat(
                unsigned(b, P.stDev), unsigned(b, P.stIno), (int) unsigned(b, P.stMode),
                unsigned(b, P.stNlink), unsigned(b, P.stUid), unsigned(b, P.stGid),
                unsigned(b, P.stSize));
    }

    private static long unsigned(java.nio.ByteBuffer b, PosixPlatform.Field f) {
        return switch (f.size()) {
            case 2 -> Short.toUnsignedLong(b.getShort(f.offset()));
            case 4 -> Integer.toUnsignedLong(b.getInt(f.offset()));
            case 8 -> b.getLong(f.offset());
            default -> throw new IllegalStateException("unsupported field size " + f.size());
        };
    }

    private static MethodHandle downcall(String name, FunctionDescriptor fd, Linker.Option... extra) {
        Linker.Option[] options = new Linker.Option[extra.length + 1];
        options[0] = ERRNO_OPTION;
        System.arraycopy(extra, 0, options, 1, extra.length);
        MemorySegment symbol = LIBC.find(name)
                .orElseThrow(() -> new IllegalStateException("C library symbol not found: " + name));
        return LINKER.downcallHandle(symbol, fd, options);
    }

    /** Lets callers pass a Java {@code int} where the C {@code mode_t} is 16 bits (macOS). */
    private static MethodHandle modeAsInt(MethodHandle h, int modeIndex) {
        if (MODE_T == JAVA_INT) {
            return h;
        }
        try {
            MethodHandle narrow = MethodHandles.lookup().findStatic(Libc.class, "narrowMode",
                    MethodType.methodType(short.class, int.class));
            return MethodHandles.filterArguments(h, modeIndex, narrow);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unused") // used through a method handle
    private static short narrowMode(int mode) {
        return (short) mode;
    }

    private static AssertionError linkageBug(Throwable t) {
        return new AssertionError("downcall failed unexpectedly", t);
    }
}
