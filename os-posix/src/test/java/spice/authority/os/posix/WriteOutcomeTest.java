package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.os.posix.Refusals.PROVIDER;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import spice.authority.core.ActiveRun;
import spice.authority.core.AuthorityException;
import spice.authority.core.Cancellation;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.core.RecordCodec;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunImport;
import spice.authority.os.FileNames;
import spice.authority.os.OpenMode;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/**
 * What the run authority answers when a step of its record write fails, on a real directory,
 * with the fault injected through the fake door ({@link FaultySyscalls}): for every durable
 * transition and every step, the answer ({@code unavailable} before the rename was called or when
 * the kernel refused the rename for want of space or quota, {@code uncertain} otherwise from the
 * rename on), whether the run is fenced, whether the record on disk
 * changed, that no temporary file is left, and what an authority opened afresh finds (what is on
 * disk is the truth).
 */
class WriteOutcomeTest {
    private static final String RUN = "run-outcome";
    private static final Cancellation NONE = Cancellation.none();
    private static final long EXT4 = 0xEF53L;
    private static final long NFS = 0x6969L;

    @FunctionalInterface
    private interface Prepare {
        Object on(RunAuthority a) throws Exception;
    }

    /** Runs the transition; returns what now owns the run (a new ActiveRun) or null. */
    @FunctionalInterface
    private interface Run {
        Object on(RunAuthority a, Object prepared) throws Exception;
    }

    private record Transition(String name, String before, String after, Prepare prepare, Run run) {}

    /** A fault: which call fails, with which errno, and whether the real call was made first. */
    private record Fault(FaultySyscalls.Call call, boolean afterCall, String errno) {
        Fault(FaultySyscalls.Call call, boolean afterCall) {
            this(call, afterCall, "EIO");
        }

        /**
         * Whether the write provably changed nothing: a step before the rename failed, or, on a
         * local file system, the rename was refused (not made) for want of space or quota. EIO and
         * other errnos (EINTR, EACCES) stay uncertain even when, as here, the rename was not made:
         * the writer cannot tell.
         */
        boolean beforeRename() {
            return (call != FaultySyscalls.Call.RENAME && call != FaultySyscalls.Call.FSYNC_DIR)
                    || (call == FaultySyscalls.Call.RENAME && !afterCall && (errno.equals("ENOSPC") || errno.equals("EDQUOT")));
        }

        /** Whether the new record is under the target name afterwards. */
        boolean renamed() {
            return call == FaultySyscalls.Call.FSYNC_DIR || (call == FaultySyscalls.Call.RENAME && afterCall);
        }

        @Override
        public String toString() {
            return call + " " + errno + (afterCall ? " (after the real call)" : "");
        }
    }

    private static final List<Fault> FAULTS = List.of(
            new Fault(FaultySyscalls.Call.CREATE_TEMP, false),
            new Fault(FaultySyscalls.Call.FCHMOD_TEMP, false),
            new Fault(FaultySyscalls.Call.WRITE, false),
            new Fault(FaultySyscalls.Call.WRITE, true),
            new Fault(FaultySyscalls.Call.FSYNC_TEMP, false),
            new Fault(FaultySyscalls.Call.CLOSE_TEMP, false),
            new Fault(FaultySyscalls.Call.RENAME, false),
            new Fault(FaultySyscalls.Call.RENAME, true),
            new Fault(FaultySyscalls.Call.RENAME, false, "ENOSPC"),
            new Fault(FaultySyscalls.Call.RENAME, false, "EDQUOT"),
            new Fault(FaultySyscalls.Call.RENAME, true, "ENOSPC"),
            new Fault(FaultySyscalls.Call.RENAME, false, "EINTR"),
            new Fault(FaultySyscalls.Call.RENAME, false, "EACCES"),
            new Fault(FaultySyscalls.Call.RENAME, false, "EROFS"),
            new Fault(FaultySyscalls.Call.FSYNC_DIR, false),
            new Fault(FaultySyscalls.Call.FSYNC_DIR, false, "ENOSPC"));

    private static List<Transition> transitions() {
        Snapshot suspended = TestSnapshots.suspended(RUN);
        Snapshot completed = TestSnapshots.completed(RUN);
        Prepare active = a -> a.start(new RunId(RUN), NONE);
        Prepare suspendedRun = a -> {
            ActiveRun r = a.start(new RunId(RUN), NONE);
            r.seal(suspended, NONE);
            return r;
        };
        Prepare prepared = a -> {
            ActiveRun r = a.start(new RunId(RUN), NONE);
            Envelope e = r.seal(suspended, NONE).envelope();
            r.close();
            return a.prepareImport(e, NONE);
        };
        return List.of(
                new Transition("start", "NONE", "ACTIVE@1", a -> null, (a, p) -> a.start(new RunId(RUN), NONE)),
                new Transition("suspend", "ACTIVE@1", "SUSPENDED@1", active, (a, p) -> {
                    ((ActiveRun) p).seal(suspended, NONE);
                    return null;
                }),
                new Transition("sign terminal", "ACTIVE@1", "COMPLETED@1", active, (a, p) -> {
                    ((ActiveRun) p).seal(completed, NONE);
                    return null;
                }),
                new Transition("terminal", "SUSPENDED@1", "FAILED@1", suspendedRun, (a, p) -> {
                    ((ActiveRun) p).terminal(RunPhase.FAILED, NONE);
                    return null;
                }),
                new Transition("resume", "SUSPENDED@1", "ACTIVE@2", suspendedRun, (a, p) -> {
                    ((ActiveRun) p).resume(NONE);
                    return null;
                }),
                new Transition("consume", "SUSPENDED@1", "IMPORTING@2", prepared, (a, p) -> {
                    ((RunImport) p).consume(NONE);
                    return null;
                }),
                new Transition("activate", "IMPORTING@2", "ACTIVE@2", a -> {
                    RunImport imp = (RunImport) prepared.on(a);
                    imp.consume(NONE);
                    return imp;
                }, (a, p) -> ((RunImport) p).activate(NONE)),
                new Transition("abandon", "ACTIVE@1", "CANCELLED@1", a -> {
                    a.start(new RunId(RUN), NONE).close();
                    return null;
                }, (a, p) -> {
                    a.abandon(new RunId(RUN), NONE);
                    return null;
                }));
    }

    private static String durable(RunAuthority a) throws AuthorityException {
        return a.inspect(new RunId(RUN)).map(r -> r.phase() + "@" + r.runGeneration()).orElse("NONE");
    }

    private static byte[] contentOrNull(Path p) throws IOException {
        return Files.exists(p) ? Files.readAllBytes(p) : null;
    }

    private static List<String> temporaries(Path leaf) throws IOException {
        try (Stream<Path> s = Files.list(leaf)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> FileNames.temporaryTarget(n).isPresent()).toList();
        }
    }

    /** Releases whatever owns the run, whatever state it is in. */
    private static void release(List<Object> owners) {
        for (Object o : owners) {
            try {
                if (o instanceof ActiveRun r) {
                    r.close();
                } else if (o instanceof RunImport i) {
                    i.abort();
                }
            } catch (AuthorityException expected) {
                // uncertain owners say so once when released
            }
        }
    }

    @Test
    void everyTransition_everyFailingWriteStep_answerFenceDiskAndReopenAgree() throws Exception {
        List<String> failures = new ArrayList<>();
        for (Transition t : transitions()) {
            for (Fault f : FAULTS) {
                String cell = t.name() + " @ " + f;
                try (TestTree tree = TestTree.create()) {
                    cell(tree, t, f, cell, failures);
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    private static void cell(TestTree tree, Transition t, Fault f, String cell, List<String> failures) throws Exception {
        Path leaf = tree.resolve("auth");
        Path state = leaf.resolve(RecordCodec.fileStem(RUN) + ".state");
        // As on a local ext4, whatever holds the test tree (a container's overlayfs, say).
        FaultySyscalls door = new FaultySyscalls().pretendFilesystem(EXT4);
        RunAuthority a = RunAuthority.open(PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, door),
                new SecureRandom());
        List<Object> owners = new ArrayList<>();
        try {
            Object prepared = t.prepare().on(a);
            owners.add(prepared);
            if (!durable(a).equals(t.before())) {
                failures.add(cell + ": setup reached " + durable(a));
                return;
            }
            byte[] before = contentOrNull(state);
            door.fail(f.call(), f.errno(), 0, f.afterCall());
            AuthorityException answer = null;
            try {
                owners.add(t.run().on(a, prepared));
            } catch (AuthorityException e) {
                answer = e;
            }
            String want = f.beforeRename() ? "unavailable" : "uncertain";
            if (answer == null || !answer.code().equals(want)) {
                failures.add(cell + ": answered " + (answer == null ? "OK" : answer.code() + " " + answer.getMessage())
                        + ", want " + want);
                return;
            }
            if (f.beforeRename() && !answer.getMessage().startsWith(t.name() + " " + RUN + ": nothing written: ")) {
                failures.add(cell + ": message " + answer.getMessage());
            }
            if (!answer.getMessage().contains(": " + f.errno())) {
                failures.add(cell + ": the errno is not named: " + answer.getMessage());
            }
            if (a.isFenced(new RunId(RUN)) == f.beforeRename()) {
                failures.add(cell + ": fenced " + a.isFenced(new RunId(RUN)));
            }
            byte[] now = contentOrNull(state);
            if (Arrays.equals(before, now) == f.renamed()) {
                failures.add(cell + ": the record " + (f.renamed() ? "did not change" : "changed"));
            }
            if (!temporaries(leaf).isEmpty()) {
                failures.add(cell + ": temporary files left: " + temporaries(leaf));
            }
            String expected = f.renamed() ? t.after() : t.before();
            if (f.beforeRename()) {
                // Nothing written: the same call works at once, on the same objects, without reopening.
                owners.add(t.run().on(a, prepared));
                expected = t.after();
                if (!durable(a).equals(expected)) {
                    failures.add(cell + ": the retry reached " + durable(a));
                }
            }
            release(owners);
            a.close();
            try (RunAuthority b = RunAuthority.open(PROVIDER.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE),
                    new SecureRandom())) {
                if (!durable(b).equals(expected)) {
                    failures.add(cell + ": reopened at " + durable(b) + ", want " + expected);
                }
                if (b.isFenced(new RunId(RUN))) {
                    failures.add(cell + ": fenced after reopening");
                }
            }
        } finally {
            release(owners);
            a.close();
        }
    }

    /**
     * Starts {@link #RUN} over {@code door} (configured by {@code setUp} with the tree's leaf, then
     * armed by {@code arm} after the open) and expects a rename refused with ENOSPC to stay
     * uncertain: fenced, no temporary file left.
     */
    private static void startStaysUncertainAfterRefusedRename(
            java.util.function.BiFunction<FaultySyscalls, Path, FaultySyscalls> setUp,
            java.util.function.Consumer<FaultySyscalls> arm) throws Exception {
        try (TestTree tree = TestTree.create()) {
            Path leaf = tree.resolve("auth");
            FaultySyscalls door = setUp.apply(new FaultySyscalls(), leaf);
            try (RunAuthority a = RunAuthority.open(
                    PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, door), new SecureRandom())) {
                door.fail(FaultySyscalls.Call.RENAME, "ENOSPC");
                arm.accept(door);
                assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOfSatisfying(AuthorityException.Uncertain.class,
                        e -> assertThat(e.getMessage()).contains("renameat: ENOSPC"));
                assertThat(a.isFenced(new RunId(RUN))).isTrue();
                assertThat(temporaries(leaf)).isEmpty();
            }
        }
    }

    @Test
    void renameRefusedForWantOfSpace_onNfs_staysUncertain() throws Exception {
        // An NFS client may move the target aside before its RENAME (silly rename) and then fail
        // with ENOSPC or EDQUOT: only a local file system's refusal proves nothing changed.
        startStaysUncertainAfterRefusedRename((door, leaf) -> door.pretendFilesystem(NFS), door -> {});
    }

    @Test
    void renameRefusedForWantOfSpace_whileTheTargetChanged_staysUncertain() throws Exception {
        // The errno alone proves nothing: the name the rename was to replace must be as it was.
        startStaysUncertainAfterRefusedRename((door, leaf) -> door.pretendFilesystem(EXT4).onFault(() -> {
            try {
                Files.write(leaf.resolve(RecordCodec.fileStem(RUN) + ".state"), new byte[] {'x'});
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }), door -> {});
    }

    @Test
    void renameRefusedForWantOfSpace_whenTheTemporaryFileCannotBeUnlinked_staysUncertain() throws Exception {
        // Our own unlink of the temporary name is the last proof that no rename of it is under way
        // (the writer's second unlink then removes it).
        startStaysUncertainAfterRefusedRename((door, leaf) -> door.pretendFilesystem(EXT4),
                door -> door.fail(FaultySyscalls.Call.UNLINK, "EIO"));
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(org.junit.jupiter.api.condition.OS.LINUX)
    void tmpfs_reportsItsFileSystemType() throws Exception {
        int fd = Syscalls.LIBC.openat(Libc.P.AT_FDCWD, "/dev/shm", Libc.P.O_RDONLY | Libc.P.O_DIRECTORY | Libc.P.O_CLOEXEC, 0);
        try {
            assertThat(Syscalls.LIBC.filesystemType(fd)).isEqualTo(0x01021994L); // TMPFS_MAGIC
        } finally {
            Syscalls.LIBC.close(fd);
        }
    }

    @Test
    void start_failedDirectoryFsync_isUncertainAndFenced_notUnavailable() throws Exception {
        try (TestTree tree = TestTree.create()) {
            Path leaf = tree.resolve("auth");
            FaultySyscalls door = new FaultySyscalls();
            try (RunAuthority a = RunAuthority.open(
                    PosixSecureDirectory.open(leaf.toString(), OpenMode.CREATE_OR_VALIDATE, door), new SecureRandom())) {
                door.fail(FaultySyscalls.Call.FSYNC_DIR, "EIO");
                assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOfSatisfying(AuthorityException.Uncertain.class,
                        e -> assertThat(e.getMessage()).contains("fsync: EIO").contains("do not retry automatically"));
                assertThat(a.isFenced(new RunId(RUN))).isTrue();
                assertThat(a.outstandingLeases()).isZero();
                assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
                // The record is in place (only its durability is unknown): a fresh authority finds it.
                assertThat(durable(a)).isEqualTo("ACTIVE@1");
            }
        }
    }
}
