package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;

/**
 * The directory flush shared by concurrent writers ({@link DirectoryFlush}, group commit) keeps the
 * durability of every acknowledged write: through the real directory and the real C library, with
 * a door ({@link OrderingSyscalls}) that puts the renames and the directory flushes on one clock,
 * slows the flushes down so that writers overlap, and can hold or fail one flush.
 */
class GroupCommitTest {

    /**
     * The property itself: when {@code writeAtomically} returns, a flush of the directory that
     * started after that write's rename returned has completed successfully. A writer answered on
     * a flush that was already under way at its rename (or on none) fails this.
     */
    @Test
    void writeAtomically_concurrentWriters_eachReturnsAfterAFlushThatStartedAfterItsRename() throws Exception {
        int threads = 8;
        int writesEach = 25;
        try (TestTree tree = TestTree.create()) {
            OrderingSyscalls door = new OrderingSyscalls(2);
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            try (PosixSecureDirectory dir = openExisting(tree, door)) {
                List<Thread> writers = new ArrayList<>();
                AtomicReference<Throwable> error = new AtomicReference<>();
                CountDownLatch go = new CountDownLatch(1);
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    writers.add(Thread.ofPlatform().start(() -> {
                        try {
                            go.await();
                            for (int i = 0; i < writesEach; i++) {
                                String name = "w" + id + ".state";
                                dir.writeAtomically(name, ("write " + i).getBytes(StandardCharsets.US_ASCII));
                                long answered = door.clock.incrementAndGet();
                                long renamed = door.lastRename.get(Thread.currentThread());
                                if (!door.completedFlushBetween(renamed, answered)) {
                                    failures.add(name + " write " + i + ": renamed at " + renamed + ", answered at " + answered
                                            + " without a successful flush started in between; flushes (start, end, ok) " + door.describeFlushes());
                                }
                            }
                        } catch (Throwable e) {
                            error.compareAndSet(null, e);
                        }
                    }));
                }
                go.countDown();
                for (Thread w : writers) {
                    w.join();
                }
                assertThat(error.get()).isNull();
            }
            assertThat(failures).isEmpty();
            // The flushes were shared (else the property above was only tested without group commit).
            assertThat(door.flushes.size()).isLessThan(threads * writesEach);
            for (int t = 0; t < threads; t++) {
                assertThat(Files.readString(tree.resolve("auth").resolve("w" + t + ".state"))).isEqualTo("write " + (writesEach - 1));
            }
        }
    }

    /**
     * Writers that renamed while a flush was under way are answered by the next flush, never by
     * the one under way; when that next flush fails, every writer that shares it fails as
     * uncertain (the rename was called), and the writer of the earlier, successful flush succeeds.
     */
    @Test
    void writeAtomically_sharedFlushFails_everyWriterOfThatBatchFailsUncertain() throws Exception {
        try (TestTree tree = TestTree.create()) {
            OrderingSyscalls door = new OrderingSyscalls(0);
            door.holdFirstFlush = new CountDownLatch(1);
            door.failFlush = 1; // the second flush of the directory fails with EIO
            try (PosixSecureDirectory dir = openExisting(tree, door)) {
                Map<String, Throwable> outcome = new ConcurrentHashMap<>();
                Thread a = write(dir, "a.state", outcome);
                assertThat(door.firstFlushHeld.await(10, TimeUnit.SECONDS)).isTrue();
                Thread b = write(dir, "b.state", outcome);
                Thread c = write(dir, "c.state", outcome);
                assertThat(Poll.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(1),
                        () -> door.renames.get() == 3 && b.getState() == Thread.State.WAITING && c.getState() == Thread.State.WAITING,
                        Boolean::booleanValue)).as("b and c wait behind the held flush, all three renamed").isTrue();
                door.holdFirstFlush.countDown();
                for (Thread t : List.of(a, b, c)) {
                    t.join();
                }
                assertThat(outcome.get("a.state")).isInstanceOf(Done.class);
                for (String late : List.of("b.state", "c.state")) {
                    assertThat(outcome.get(late)).as(late).isInstanceOf(DirectoryRefusedException.class);
                    assertThat(((DirectoryRefusedException) outcome.get(late)).nothingWritten()).as(late).isFalse();
                }
                assertThat(door.flushes).hasSize(2);
            }
        }
    }

    /**
     * A failed flush of the directory is final: a later write is uncertain too, and no later
     * {@code fsync} is asked to prove it (the kernel reports a writeback error once, and a later
     * success says nothing of the entries it dropped). A door whose later flushes would succeed
     * fails this without the sticky failure.
     */
    @Test
    void writeAtomically_afterAFailedFlush_laterWritesFailUncertainWithoutAnotherFsync() throws Exception {
        afterAFailedFlush(null);
    }

    /** The same when the flush ended in an Error (its answer lost): unknown, so final too. */
    @Test
    void writeAtomically_afterAFlushEndedByAnError_laterWritesFailUncertainWithoutAnotherFsync() throws Exception {
        afterAFailedFlush(new OutOfMemoryError("simulated: lost the flush's answer"));
    }

    private static void afterAFailedFlush(Error failWith) throws Exception {
        try (TestTree tree = TestTree.create()) {
            OrderingSyscalls door = new OrderingSyscalls(0);
            door.failWith = failWith;
            door.failFlush = 0; // the first flush of the directory fails; later ones would succeed
            try (PosixSecureDirectory dir = openExisting(tree, door)) {
                for (String name : List.of("a.state", "b.state", "c.state")) {
                    Map<String, Throwable> outcome = new ConcurrentHashMap<>();
                    write(dir, name, outcome).join();
                    if (failWith != null && name.equals("a.state")) {
                        assertThat(outcome.get(name)).isSameAs(failWith); // the caller treats an Error as uncertain
                        continue;
                    }
                    assertThat(outcome.get(name)).as(name).isInstanceOf(DirectoryRefusedException.class);
                    DirectoryRefusedException e = (DirectoryRefusedException) outcome.get(name);
                    assertThat(e.nothingWritten()).as(name).isFalse();
                    if (!name.equals("a.state")) {
                        assertThat(e.getMessage()).as(name).contains("failed earlier");
                    }
                }
                assertThat(door.flushes).as(door.describeFlushes()).hasSize(1);
                // And the directory says so before any write: every transition's revalidate refuses.
                org.assertj.core.api.Assertions.assertThatThrownBy(dir::revalidate)
                        .isInstanceOf(DirectoryRefusedException.class)
                        .hasMessageContaining("an fsync of this directory failed (EIO)")
                        .hasMessageContaining("restart the helper");
            }
        }
    }

    /**
     * The authority directory, opened through the door, which counts (and holds or fails) the
     * writes' flushes only: opening one that may create flushes its parent too.
     */
    private static PosixSecureDirectory openExisting(TestTree tree, OrderingSyscalls door) throws DirectoryRefusedException {
        PosixSecureDirectory dir = PosixSecureDirectory.open(tree.resolve("auth").toString(), OpenMode.CREATE_OR_VALIDATE, door);
        door.counting = true;
        return dir;
    }

    /** Marks a write that returned normally. */
    private static final class Done extends Exception {
        Done() {
            super(null, null, false, false);
        }
    }

    private static Thread write(PosixSecureDirectory dir, String name, Map<String, Throwable> outcome) {
        return Thread.ofPlatform().start(() -> {
            try {
                dir.writeAtomically(name, name.getBytes(StandardCharsets.US_ASCII));
                outcome.put(name, new Done());
            } catch (Throwable e) {
                outcome.put(name, e);
            }
        });
    }

    /**
     * The real C library, with the renames and the directory's flushes (an {@code fsync} of a
     * descriptor that is not a temporary file's) stamped on one clock.
     */
    private static final class OrderingSyscalls implements Syscalls {
        private final Syscalls real = Syscalls.LIBC;
        private final PosixPlatform p = Libc.P;
        private final long flushDelayMillis;
        private final Set<Integer> tempFds = ConcurrentHashMap.newKeySet();
        final AtomicLong clock = new AtomicLong();
        final AtomicInteger renames = new AtomicInteger();
        final Map<Thread, Long> lastRename = new ConcurrentHashMap<>();
        /** Each flush: start and end on the clock, and whether it succeeded. */
        final List<long[]> flushes = Collections.synchronizedList(new ArrayList<>());
        volatile CountDownLatch holdFirstFlush;
        final CountDownLatch firstFlushHeld = new CountDownLatch(1);
        volatile int failFlush = -1;
        /** Whether directory flushes are counted yet (not while the directory is opened). */
        volatile boolean counting;
        /** What the failing flush throws instead of EIO (an Error that lost the kernel's answer). */
        volatile Error failWith;

        OrderingSyscalls(long flushDelayMillis) {
            this.flushDelayMillis = flushDelayMillis;
        }

        String describeFlushes() {
            synchronized (flushes) {
                return flushes.stream().map(java.util.Arrays::toString).toList().toString();
            }
        }

        boolean completedFlushBetween(long renamed, long answered) {
            synchronized (flushes) {
                return flushes.stream().anyMatch(f -> f[2] == 1 && f[0] > renamed && f[1] < answered);
            }
        }

        @Override
        public int openat(int dirfd, String pathname, int flags, int mode) throws PosixException {
            int fd = real.openat(dirfd, pathname, flags, mode);
            if ((flags & p.O_CREAT) != 0 && pathname.endsWith(".tmp")) {
                tempFds.add(fd);
            }
            return fd;
        }

        @Override
        public void close(int fd) throws PosixException {
            tempFds.remove(fd);
            real.close(fd);
        }

        @Override
        public void renameat(int olddirfd, String oldpath, int newdirfd, String newpath) throws PosixException {
            real.renameat(olddirfd, oldpath, newdirfd, newpath);
            lastRename.put(Thread.currentThread(), clock.incrementAndGet());
            renames.incrementAndGet();
        }

        @Override
        public void fsync(int fd) throws PosixException {
            if (tempFds.contains(fd) || !counting) {
                real.fsync(fd);
                return;
            }
            int n;
            long start;
            synchronized (flushes) {
                n = flushes.size();
                start = clock.incrementAndGet();
                flushes.add(new long[] {start, Long.MAX_VALUE, 0});
            }
            CountDownLatch hold = holdFirstFlush;
            if (n == 0 && hold != null) {
                firstFlushHeld.countDown();
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                Thread.sleep(flushDelayMillis); // the subject: a slow disk, so that writers pile up behind a flush
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            boolean ok = n != failFlush;
            if (ok) {
                real.fsync(fd);
            }
            synchronized (flushes) {
                long[] f = flushes.get(n);
                f[1] = clock.incrementAndGet();
                f[2] = ok ? 1 : 0;
            }
            if (!ok) {
                if (failWith != null) {
                    throw failWith;
                }
                throw new PosixException(p.errnoValue("EIO"), "fsync");
            }
        }

        @Override
        public FileStat fstat(int fd) throws PosixException {
            return real.fstat(fd);
        }

        @Override
        public FileStat fstatat(int dirfd, String pathname, int flags) throws PosixException {
            return real.fstatat(dirfd, pathname, flags);
        }

        @Override
        public void mkdirat(int dirfd, String pathname, int mode) throws PosixException {
            real.mkdirat(dirfd, pathname, mode);
        }

        @Override
        public void fchmod(int fd, int mode) throws PosixException {
            real.fchmod(fd, mode);
        }

        @Override
        public void unlinkat(int dirfd, String pathname, int flags) throws PosixException {
            real.unlinkat(dirfd, pathname, flags);
        }

        @Override
        public void flock(int fd, int operation) throws PosixException {
            real.flock(fd, operation);
        }

        @Override
        public int read(int fd, byte[] buf, int off, int len) throws PosixException {
            return real.read(fd, buf, off, len);
        }

        @Override
        public int write(int fd, byte[] buf, int off, int len) throws PosixException {
            return real.write(fd, buf, off, len);
        }

        @Override
        public int getdents64(int fd, byte[] buf) throws PosixException {
            return real.getdents64(fd, buf);
        }

        @Override
        public long filesystemType(int fd) throws PosixException {
            return real.filesystemType(fd);
        }

        @Override
        public Statx statx(int dirfd, String pathname, int flags) throws PosixException {
            return real.statx(dirfd, pathname, flags);
        }

        @Override
        public long fdopendir(int fd) throws PosixException {
            return real.fdopendir(fd);
        }

        @Override
        public boolean readdir_r(long dir, byte[] entry) throws PosixException {
            return real.readdir_r(dir, entry);
        }

        @Override
        public void closedir(long dir) throws PosixException {
            real.closedir(dir);
        }

        @Override
        public long geteuid() {
            return real.geteuid();
        }
    }
}
