package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.envelope.Envelope;

/**
 * Identity proof on every use (ARCHITECTURE.md "stricter" point 6) covers {@code identity.key}:
 * before each durable transition the file must still pass the directory's file rule and still be
 * the file the key was read from. A change refuses the transition as {@code unavailable}, writes
 * nothing and fences nothing; restoring the file makes the transition work again.
 */
class IdentityFileRecheckTest {
    private static final String RUN = "run-identity";
    private static final String KEY = RunAuthority.IDENTITY_KEY;
    private static final String PREFIX = "identity file refused, nothing written: /memory/authority/identity.key: ";
    private static final Cancellation NONE = Cancellation.none();

    /** An outside change to the identity file, the category it must be refused with, and its undo. */
    private record Tamper(String name, String category, Change apply, Change undo) {}

    @FunctionalInterface
    private interface Change {
        void on(MemoryDirectory dir, MemoryDirectory.Status original);
    }

    private static List<Tamper> tampers() {
        return List.of(
                new Tamper("chmod 0644", "MODE", (d, o) -> d.chmod(KEY, 0644), (d, o) -> d.chmod(KEY, 0600)),
                new Tamper("chmod 0400", "MODE", (d, o) -> d.chmod(KEY, 0400), (d, o) -> d.chmod(KEY, 0600)),
                new Tamper("hard link added", "LINKS", (d, o) -> d.addHardLink(KEY), (d, o) -> d.removeHardLink(KEY)),
                new Tamper("replaced, same content", "IDENTITY", (d, o) -> d.replaceKeepingContent(KEY), (d, o) -> d.restore(KEY, o)),
                new Tamper("replaced by a symlink", "SYMLINK", (d, o) -> d.replaceWithSymlink(KEY), (d, o) -> d.restore(KEY, o)));
    }

    /** A durable transition: how to reach the state before it, and the transition itself. */
    private interface Step {
        Object prepare(RunAuthority a) throws Exception;

        void run(RunAuthority a, Object prepared) throws Exception;
    }

    private record Transition(String name, Step step) {}

    private static List<Transition> transitions() {
        return List.of(
                new Transition("start", new Step() {
                    public Object prepare(RunAuthority a) {
                        return null;
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        a.start(new RunId(RUN), NONE).close();
                    }
                }),
                new Transition("suspend", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        return a.start(new RunId(RUN), NONE);
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).seal(Fixtures.suspended(RUN, 7), NONE);
                    }
                }),
                new Transition("sign terminal", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        return a.start(new RunId(RUN), NONE);
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).seal(Fixtures.snapshot(RUN, "completed", 9), NONE);
                    }
                }),
                new Transition("terminal", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        return a.start(new RunId(RUN), NONE);
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).terminal(RunPhase.FAILED, NONE);
                    }
                }),
                new Transition("resume", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        r.seal(Fixtures.suspended(RUN, 7), NONE);
                        return r;
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        ((ActiveRun) p).resume(NONE);
                    }
                }),
                new Transition("prepare import", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        Envelope e = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
                        r.close();
                        return e;
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        a.prepareImport((Envelope) p, NONE).abort();
                    }
                }),
                new Transition("consume", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        Envelope e = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
                        r.close();
                        return a.prepareImport(e, NONE);
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        ((RunImport) p).consume(NONE);
                    }
                }),
                new Transition("activate", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        ActiveRun r = a.start(new RunId(RUN), NONE);
                        Envelope e = r.seal(Fixtures.suspended(RUN, 7), NONE).envelope();
                        r.close();
                        RunImport imp = a.prepareImport(e, NONE);
                        imp.consume(NONE);
                        return imp;
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        ((RunImport) p).activate(NONE);
                    }
                }),
                new Transition("abandon", new Step() {
                    public Object prepare(RunAuthority a) throws Exception {
                        a.start(new RunId(RUN), NONE).close();
                        return null;
                    }

                    public void run(RunAuthority a, Object p) throws Exception {
                        a.abandon(new RunId(RUN), NONE);
                    }
                }));
    }

    @Test
    void identityFileChanged_everyTransitionRefusedWritesNothing_andWorksOnceRestored() throws Exception {
        List<String> failures = new ArrayList<>();
        for (Tamper t : tampers()) {
            for (Transition tr : transitions()) {
                String cell = tr.name() + " after " + t.name();
                MemoryDirectory dir = new MemoryDirectory();
                RunAuthority a = Fixtures.open(dir);
                String keyHex = HexFormat.of().formatHex(Arrays.copyOfRange(dir.visibleFile(KEY), 40, 72));
                Object prepared = tr.step().prepare(a);
                Map<String, byte[]> before = dir.snapshotFiles();
                int writes = dir.writeCount();
                MemoryDirectory.Status original = dir.statusOf(KEY);
                t.apply().on(dir, original);

                AuthorityException refused = null;
                try {
                    tr.step().run(a, prepared);
                } catch (AuthorityException e) {
                    refused = e;
                }
                if (!(refused instanceof AuthorityException.Unavailable)) {
                    failures.add(cell + ": got " + refused);
                    continue;
                }
                String msg = refused.getMessage();
                if (!msg.startsWith(PREFIX + t.category() + " (")) {
                    failures.add(cell + ": message " + msg);
                }
                if (msg.contains(keyHex) || refused.toString().contains(keyHex)) {
                    failures.add(cell + ": message shows the key");
                }
                if (!refused.retryable()) {
                    failures.add(cell + ": not retryable");
                }
                if (dir.writeCount() != writes || !sameFiles(before, dir.snapshotFiles())) {
                    failures.add(cell + ": something was written");
                }
                if (a.isFenced(new RunId(RUN))) {
                    failures.add(cell + ": run fenced");
                }

                t.undo().on(dir, original);
                try {
                    tr.step().run(a, prepared);
                } catch (AuthorityException e) {
                    failures.add(cell + ": after restoring: " + e);
                }
                if (dir.writeCount() == writes && !tr.name().equals("prepare import")) {
                    failures.add(cell + ": after restoring nothing was written");
                }
                a.close();
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void identityFileReplacedWithSameContent_refusedAsIdentity_namingBothFilesNotTheKey() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        MemoryDirectory.Status original = dir.statusOf(KEY);
        byte[] content = dir.visibleFile(KEY);
        dir.replaceKeepingContent(KEY);
        assertThat(dir.visibleFile(KEY)).isEqualTo(content);
        assertThatThrownBy(() -> a.start(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessage(PREFIX + "IDENTITY (is file 1:" + dir.statusOf(KEY).inode() + ", not 1:" + original.inode()
                        + " that the authority key was read from)");
        assertThat(a.inspect(new RunId(RUN))).isEmpty();
        // A fresh authority trusts the file it reads now; this one keeps refusing.
        RunAuthority b = Fixtures.open(dir);
        b.start(new RunId(RUN), NONE).close();
        assertThatThrownBy(() -> a.abandon(new RunId(RUN), NONE)).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageStartingWith(PREFIX + "IDENTITY (");
        b.close();
        a.close();
    }

    @Test
    void identityFileBrokenAtOpen_refusedWithTheRule_andNothingCreated() {
        MemoryDirectory first = new MemoryDirectory();
        Fixtures.open(first).close();
        MemoryDirectory dir = first.afterCrash(); // the same files, opened again
        dir.chmod(KEY, 0644);
        Map<String, byte[]> before = dir.snapshotFiles();
        int writes = dir.writeCount();
        assertThatThrownBy(() -> RunAuthority.open(dir, Fixtures.random())).isInstanceOf(AuthorityException.Unavailable.class)
                .hasMessageStartingWith("identity file refused: /memory/authority/identity.key: MODE (");
        assertThat(dir.writeCount()).isEqualTo(writes);
        assertThat(sameFiles(before, dir.snapshotFiles())).isTrue();
    }

    @Test
    void inspect_isNotATransition_readsWhileTheIdentityFileIsRefused() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        a.start(new RunId(RUN), NONE).close();
        dir.chmod(KEY, 0644);
        assertThat(a.inspect(new RunId(RUN))).map(RunRecord::phase).contains(RunPhase.ACTIVE);
        a.close();
    }

    private static boolean sameFiles(Map<String, byte[]> a, Map<String, byte[]> b) {
        if (!a.keySet().equals(b.keySet())) {
            return false;
        }
        for (String k : a.keySet()) {
            if (!Arrays.equals(a.get(k), b.get(k))) {
                return false;
            }
        }
        return true;
    }
}
