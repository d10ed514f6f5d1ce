package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.payload.Snapshot;

/** Crash consistency, the cancellation boundary, directory re-validation and shutdown. */
class AuthorityFailureTest {
    private static final String RUN = "run-crash";
    private static final Cancellation NONE = Cancellation.none();

    /** A transition under test: how to reach the state just before it, and the transition itself. */
    private interface Step {
        Object prepare(RunAuthority a) throws Exception;

        void transition(RunAuthority a, Object prepared) throws Exception;
    }

    private record Transition(String name, String before, String after, Step step) {}

    private static List<Transition> transitions() {
        Snapshot s1 = Fixtures.suspended(RUN, 7);
        Snapshot done = Fixtures.snapshot(RUN, "completed", 9);
        return List.of(
                new Transition("start", "NONE", "ACTIVE@1", new Step() {
                    public Object prepare(RunAuthority a) {
                        return null;
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        a.start(new RunId(RUN), NONE);
                    }
                }),
                new Transition("suspend", "ACTIVE@1", "SUSPENDED@1", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        return a.start(new RunId(RUN), NONE);
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).seal(s1, NONE);
                    }
                }),
                new Transition("resume", "SUSPENDED@1", "ACTIVE@2", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        r.seal(s1, NONE);
                        return r;
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).resume(NONE);
                    }
                }),
                new Transition("sign terminal", "ACTIVE@1", "COMPLETED@1", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        return a.start(new RunId(RUN), NONE);
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).seal(done, NONE);
                    }
                }),
                new Transition("terminal", "SUSPENDED@1", "FAILED@1", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        r.seal(s1, NONE);
                        return r;
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).terminal(RunPhase.FAILED, NONE);
                    }
                }),
                new Transition("consume", "SUSPENDED@1", "IMPORTING@2", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        Envelope e = r.seal(s1, NONE).envelope();
                        r.close();
                        return a.prepareImport(e, NONE);
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        ((RunImport) p).consume(NONE);
                    }
                }),
                new Transition("activate", "IMPORTING@2", "ACTIVE@2", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        Envelope e = r.seal(s1, NONE).envelope();
                        r.close();
                        RunImport imp = a.prepareImport(e, NONE);
                        imp.consume(NONE);
                        return imp;
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        ((RunImport) p).activate(NONE);
                    }
                }),
                new Transition("abandon", "ACTIVE@1", "CANCELLED@1", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        a.start(new RunId(RUN), NONE).close();
                        return null;
                    }

                    public void transition(RunAuthority a, Object p) throws Exception {
                        a.abandon(new RunId(RUN), NONE);
                    }
                }));
    }

    private static String durable(RunAuthority a) throws AuthorityException {
        return a.inspect(new RunId(RUN)).map(r -> r.phase() + "@" + r.runGeneration()).orElse("NONE");
    }

    /** Whether a fault at {@code step} comes before the rename is called (the SPI says so). */
    private static boolean beforeRename(MemoryDirectory.Step step) {
        return switch (step) {
            case BEFORE_TEMP_WRITTEN, AFTER_WRITE_BEFORE_FSYNC, AFTER_FSYNC_BEFORE_RENAME -> true;
            case RENAME_FAILS, AFTER_RENAME_BEFORE_DIR_FSYNC -> false;
        };
    }

    @Test
    void crashAtEveryWriteStep_ofEveryTransition_unavailableBeforeRenameElseUncertain_diskIsTheTruth() throws Exception {
        List<String> failures = new ArrayList<>();
        for (Transition t : transitions()) {
            for (MemoryDirectory.Step step : MemoryDirectory.Step.values()) {
                for (boolean renameDurable : new boolean[] {false, true}) {
                    if (step != MemoryDirectory.Step.AFTER_RENAME_BEFORE_DIR_FSYNC && renameDurable) {
                        continue;
                    }
                    String cell = t.name() + " @ " + step + (renameDurable ? " (rename reached disk)" : "");
                    MemoryDirectory dir = new MemoryDirectory();
                    RunAuthority a = Fixtures.open(dir);
                    Object prepared = t.step().prepare(a);
                    if (!durable(a).equals(t.before())) {
                        failures.add(cell + ": setup reached " + durable(a));
                        continue;
                    }
                    dir.failAt(step, 0, renameDurable);
                    String reported;
                    try {
                        t.step().transition(a, prepared);
                        reported = "OK";
                    } catch (AuthorityException e) {
                        reported = e.code();
                    }
                    // Before the rename nothing was written: a retryable unavailable, not fenced.
                    // From the rename on the outcome is unknown: uncertain and fenced, in Start too.
                    boolean clean = beforeRename(step);
                    String want = clean ? "unavailable" : "uncertain";
                    if (!reported.equals(want)) {
                        failures.add(cell + ": reported " + reported + ", want " + want);
                    }
                    if (a.isFenced(new RunId(RUN)) == clean) {
                        failures.add(cell + ": fenced " + a.isFenced(new RunId(RUN)) + ", want " + !clean);
                    }
                    if (clean && !durable(a).equals(t.before())) {
                        failures.add(cell + ": nothing written, yet the record is " + durable(a));
                    }
                    // Power loss and restart: the durable state is the old or the new one, nothing else.
                    MemoryDirectory restarted = dir.afterCrash();
                    RunAuthority b = Fixtures.open(restarted);
                    String after = durable(b);
                    boolean visibleNew = step == MemoryDirectory.Step.AFTER_RENAME_BEFORE_DIR_FSYNC;
                    String expected = visibleNew && renameDurable ? t.after() : t.before();
                    if (!after.equals(expected)) {
                        failures.add(cell + ": after restart " + after + ", want " + expected);
                    }
                    if (!after.equals(t.before()) && !after.equals(t.after())) {
                        failures.add(cell + ": torn state " + after);
                    }
                    b.close();
                    // Nothing written: the same call on the same objects works once the cause is gone.
                    if (clean) {
                        try {
                            t.step().transition(a, prepared);
                            if (!durable(a).equals(t.after())) {
                                failures.add(cell + ": retry reached " + durable(a) + ", want " + t.after());
                            }
                        } catch (AuthorityException e) {
                            failures.add(cell + ": retry failed: " + e.getMessage());
                        }
                    }
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void failureBeforeTheRename_isUnavailableNamingTheCause_andNotFenced() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        dir.failAt(MemoryDirectory.Step.AFTER_WRITE_BEFORE_FSYNC, 0, false);
        assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOfSatisfying(AuthorityException.Unavailable.class, e -> {
            assertThat(e.retryable()).isTrue();
            assertThat(e.getMessage()).startsWith("start " + RUN + ": nothing written: injected fault AFTER_WRITE_BEFORE_FSYNC (")
                    .contains(": IO)");
        });
        assertThat(a.isFenced(new RunId(RUN))).isFalse();
        assertThat(a.outstandingLeases()).isZero();
        assertThat(durable(a)).isEqualTo("NONE");
        a.start(new RunId(RUN), NONE).close();
        assertThat(durable(a)).isEqualTo("ACTIVE@1");
    }

    @Test
    void refusedDestination_isUnavailableAndNotFenced_untilRestored() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        String stateFile = RecordCodec.fileStem(RUN) + ".state";
        dir.chmod(stateFile, 0644);
        assertThatThrownBy(() -> r.seal(Fixtures.suspended(RUN, 7), NONE)).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageContaining("nothing written").hasMessageContaining("MODE");
        assertThat(a.isFenced(new RunId(RUN))).isFalse();
        assertThat(r.isUncertain()).isFalse();
        dir.chmod(stateFile, 0600);
        r.seal(Fixtures.suspended(RUN, 7), NONE);
        assertThat(durable(a)).isEqualTo("SUSPENDED@1");
        r.close();
    }

    @Test
    void fencedRun_everyLaterOperationIsUncertain_untilRestart() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        Envelope e = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
        dir.failAt(MemoryDirectory.Step.RENAME_FAILS, 0, false);
        assertThatThrownBy(() -> r.resume(NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(() -> r.resume(NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(() -> r.terminal(RunPhase.FAILED, NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(r::close).isInstanceOf(AuthorityException.Uncertain.class);
        r.close(); // later closes report nothing
        assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThatThrownBy(() -> a.prepareImport(e, NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        // The failed resume did not land: after a restart the durable record decides, and the
        // snapshot is importable again.
        RunAuthority b = Fixtures.open(dir.afterCrash());
        RunImport imp = b.prepareImport(e, NONE);
        imp.abort();
    }

    @Test
    void cancellationAtTheFinalPreWriteCheck_isRetryableAndWritesNothing() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        Cancellation c = Cancellation.create();
        dir.onRevalidate(c::cancel); // cancels between the entry check and the final check
        int writes = dir.writeCount();
        AuthorityException e = null;
        try {
            r.seal(Fixtures.suspended(RUN, 7), c);
        } catch (AuthorityException ex) {
            e = ex;
        }
        assertThat(e).isInstanceOf(AuthorityException.Cancelled.class);
        assertThat(e.retryable()).isTrue();
        assertThat(dir.writeCount()).isEqualTo(writes);
        assertThat(a.isFenced(new RunId(RUN))).isFalse();
        assertThat(durable(a)).isEqualTo("ACTIVE@1");
        dir.onRevalidate(null);
        r.seal(Fixtures.suspended(RUN, 7), NONE); // the retry succeeds
        assertThat(durable(a)).isEqualTo("SUSPENDED@1");
        Cancellation expired = Cancellation.withTimeout(Duration.ZERO);
        assertThatThrownBy(() -> r.resume(expired)).isInstanceOf(AuthorityException.Cancelled.class);
        assertThat(durable(a)).isEqualTo("SUSPENDED@1");
        r.close();
    }

    @Test
    void directoryRefusedOnRevalidation_refusesTransitionWritesNothing_andRecoversWhenRestored() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        Map<String, byte[]> before = dir.snapshotFiles();
        dir.refuseRevalidation("moved away");
        assertThatThrownBy(() -> r.seal(Fixtures.suspended(RUN, 7), NONE)).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageContaining("IDENTITY").hasMessageContaining("nothing written");
        assertThatThrownBy(() -> a.start(new RunId("another-run"), NONE)).isInstanceOf(AuthorityException.Unavailable.class);
        assertThat(dir.snapshotFiles().keySet()).isEqualTo(before.keySet());
        for (String k : before.keySet()) {
            assertThat(dir.visibleFile(k)).isEqualTo(before.get(k));
        }
        assertThat(a.isFenced(new RunId(RUN))).isFalse();
        dir.refuseRevalidation(null);
        r.seal(Fixtures.suspended(RUN, 7), NONE);
        assertThat(durable(a)).isEqualTo("SUSPENDED@1");
        r.close();
    }

    @Test
    void close_withOutstandingLease_reportsBusyThenLastLeaseCompletesShutdownAndZeroesKey() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        assertThatThrownBy(() -> a.close(Duration.ofMillis(50))).isInstanceOf(AuthorityException.Busy.class)
                .hasMessageContaining("1 run or import lease");
        assertThat(a.state()).isEqualTo("closing");
        assertThatThrownBy(() -> a.start(new RunId("other"), NONE)).isInstanceOf(AuthorityException.Closed.class);
        // Work on the outstanding lease may finish.
        r.seal(Fixtures.snapshot(RUN, "completed", 9), NONE);
        assertThat(a.state()).isEqualTo("closed");
        assertThat(a.masterKeyZeroed()).isTrue();
        assertThat(dir.isClosed()).isTrue();
        a.close(Duration.ZERO); // idempotent
    }

    @Test
    void close_withAnyWait_evenOneWhoseNanosecondsOverflow_closesWhenNoLeaseIsOut() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        a.close(Duration.ofSeconds(Long.MAX_VALUE)); // used to throw ArithmeticException
        assertThat(a.state()).isEqualTo("closed");
        assertThat(dir.isClosed()).isTrue();
    }

    @Test
    void close_thenEveryOperationIsClosedAndKeyBytesAreZero() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        Envelope e = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
        r.close();
        a.close(Duration.ofSeconds(1));
        assertThat(a.masterKeyZeroed()).isTrue();
        assertThat(a.toString()).doesNotContain("key=0").contains("closed");
        assertThatThrownBy(() -> a.start(new RunId("x"), NONE)).isInstanceOf(AuthorityException.Closed.class);
        assertThatThrownBy(() -> a.prepareImport(e, NONE)).isInstanceOf(AuthorityException.Closed.class);
        assertThatThrownBy(() -> a.abandon(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Closed.class);
        assertThatThrownBy(() -> a.inspect(new RunId(RUN))).isInstanceOf(AuthorityException.Closed.class);
        assertThatThrownBy(() -> r.resume(NONE)).isInstanceOf(AuthorityException.Closed.class);
    }

    @Test
    void verificationFailures_allShareOneMessage() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        Envelope good = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
        r.close();
        // A second authority (another scope) and tampered records all fail identically.
        MemoryDirectory other = new MemoryDirectory();
        RunAuthority b = Fixtures.open(other);
        ActiveRun r2 = b.start(new RunId(RUN), NONE);
        Envelope foreign = r2.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
        r2.close();
        Set<String> messages = new java.util.HashSet<>();
        for (Envelope e : List.of(foreign, Envelope.parse(good.toBinary()))) {
            if (e == foreign) {
                try {
                    a.prepareImport(e, NONE);
                } catch (AuthorityException.Verification v) {
                    messages.add(v.getMessage());
                }
            }
        }
        String stateFile = RecordCodec.fileStem(RUN) + ".state";
        byte[] record = dir.visibleFile(stateFile);
        dir.deleteFile(stateFile);
        try {
            a.prepareImport(good, NONE);
        } catch (AuthorityException.Verification v) {
            messages.add(v.getMessage());
        }
        byte[] tampered = record.clone();
        tampered[tampered.length - 5] ^= 1;
        dir.putFile(stateFile, tampered);
        try {
            a.prepareImport(good, NONE);
        } catch (AuthorityException.Verification v) {
            messages.add(v.getMessage());
        }
        assertThat(messages).containsExactly("snapshot authority verification failed");
    }

    @Test
    void errorThrownAfterTheRename_isUncertainAndFenced_neverACleanAbort() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun r = a.start(new RunId(RUN), NONE);
        Envelope e = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
        r.close();
        RunImport imp = a.prepareImport(e, NONE);
        dir.errorAfterRename(0);
        assertThatThrownBy(() -> imp.consume(NONE)).isInstanceOf(AuthorityException.Uncertain.class)
                .hasMessageContaining("StackOverflowError");
        assertThat(a.isFenced(new RunId(RUN))).isTrue();
        assertThat(durable(a)).isEqualTo("IMPORTING@2");
        assertThatThrownBy(imp::abort).isInstanceOf(AuthorityException.Uncertain.class);
    }

    @Test
    void runFencedWhileAnImporterWaitsForTheLock_importIsUncertain() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        ActiveRun owner = a.start(new RunId(RUN), NONE);
        Envelope e = owner.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
        boolean[] once = {false};
        // Between the importer's first fence check and its lock, the owner's tombstone write fails
        // at the rename (record still SUSPENDED, run fenced) and the owner lets go.
        dir.onRevalidate(() -> {
            if (!once[0]) {
                once[0] = true;
                dir.failAt(MemoryDirectory.Step.RENAME_FAILS, 0, false);
                try {
                    owner.terminal(RunPhase.CANCELLED, NONE);
                } catch (AuthorityException expected) {
                    // uncertain
                }
                try {
                    owner.close();
                } catch (AuthorityException.Uncertain expected) {
                    // first close of an uncertain run
                }
            }
        });
        assertThatThrownBy(() -> a.prepareImport(e, NONE)).isInstanceOf(AuthorityException.Uncertain.class);
        assertThat(durable(a)).isEqualTo("SUSPENDED@1");
        assertThat(a.outstandingLeases()).isZero();
    }
}
