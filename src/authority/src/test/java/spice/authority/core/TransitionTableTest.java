package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Every situation (durable phase, owner and import state) × every operation, with the expected
 * result and the durable state afterwards, from the one table below. A missing or extra cell
 * fails the test. Cells: {@code RESULT:PHASE@GENERATION} (or {@code :NONE}), {@code -} where the
 * situation has no object to call the operation on.
 */
class TransitionTableTest {

    private static final String TABLE = """
            situation          START             PREPARE            ABANDON           REISSUE           REISSUE_OTHER     SIGN_SUSP          SIGN_SUSP_OTHER    SIGN_TERM          RESUME             TERMINAL           CLOSE_OWNER    CONSUME           ACTIVATE          ABORT
            NONE               OK:ACTIVE@1       VERIFY:NONE        STATE:NONE        STATE:NONE        STATE:NONE        -                  -                  -                  -                  -                  -              -                 -                 -
            ACTIVE_OWNED       BUSY:ACTIVE@1     VERIFY:ACTIVE@1    BUSY:ACTIVE@1     STATE:ACTIVE@1    STATE:ACTIVE@1    OK:SUSPENDED@1     OK:SUSPENDED@1     OK:COMPLETED@1     STATE:ACTIVE@1     OK:FAILED@1        OK:ACTIVE@1    -                 -                 -
            ACTIVE_ORPHAN      STATE:ACTIVE@1    VERIFY:ACTIVE@1    OK:CANCELLED@1    STATE:ACTIVE@1    STATE:ACTIVE@1    CLOSED:ACTIVE@1    CLOSED:ACTIVE@1    CLOSED:ACTIVE@1    CLOSED:ACTIVE@1    CLOSED:ACTIVE@1    OK:ACTIVE@1    -                 -                 -
            SUSPENDED_OWNED    BUSY:SUSPENDED@1  BUSY:SUSPENDED@1   BUSY:SUSPENDED@1  OK:SUSPENDED@1    STATE:SUSPENDED@1 OK:SUSPENDED@1     STATE:SUSPENDED@1  OK:COMPLETED@1     OK:ACTIVE@2        OK:FAILED@1        OK:SUSPENDED@1 -                 -                 -
            SUSPENDED_FREE     STATE:SUSPENDED@1 OK:SUSPENDED@1     OK:CANCELLED@1    OK:SUSPENDED@1    STATE:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 OK:SUSPENDED@1 -                 -                 -
            PREPARED           BUSY:SUSPENDED@1  BUSY:SUSPENDED@1   BUSY:SUSPENDED@1  OK:SUSPENDED@1    STATE:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 CLOSED:SUSPENDED@1 OK:SUSPENDED@1 OK:IMPORTING@2    STATE:SUSPENDED@1 OK:SUSPENDED@1
            IMPORTING_CONSUMED BUSY:IMPORTING@2  VERIFY:IMPORTING@2 BUSY:IMPORTING@2  STATE:IMPORTING@2 STATE:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 OK:IMPORTING@2 STATE:IMPORTING@2 OK:ACTIVE@2       UNCERTAIN:IMPORTING@2
            IMPORTING_ORPHAN   STATE:IMPORTING@2 VERIFY:IMPORTING@2 OK:CANCELLED@2    STATE:IMPORTING@2 STATE:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 CLOSED:IMPORTING@2 OK:IMPORTING@2 STATE:IMPORTING@2 STATE:IMPORTING@2 OK:IMPORTING@2
            COMPLETED          STATE:COMPLETED@1 VERIFY:COMPLETED@1 STATE:COMPLETED@1 STATE:COMPLETED@1 STATE:COMPLETED@1 CLOSED:COMPLETED@1 CLOSED:COMPLETED@1 CLOSED:COMPLETED@1 CLOSED:COMPLETED@1 CLOSED:COMPLETED@1 OK:COMPLETED@1 -                 -                 -
            FAILED             STATE:FAILED@1    VERIFY:FAILED@1    STATE:FAILED@1    STATE:FAILED@1    STATE:FAILED@1    CLOSED:FAILED@1    CLOSED:FAILED@1    CLOSED:FAILED@1    CLOSED:FAILED@1    CLOSED:FAILED@1    OK:FAILED@1    -                 -                 -
            CANCELLED          STATE:CANCELLED@1 VERIFY:CANCELLED@1 STATE:CANCELLED@1 STATE:CANCELLED@1 STATE:CANCELLED@1 CLOSED:CANCELLED@1 CLOSED:CANCELLED@1 CLOSED:CANCELLED@1 CLOSED:CANCELLED@1 CLOSED:CANCELLED@1 OK:CANCELLED@1 -                 -                 -
            """;

    enum Situation { NONE, ACTIVE_OWNED, ACTIVE_ORPHAN, SUSPENDED_OWNED, SUSPENDED_FREE, PREPARED, IMPORTING_CONSUMED,
        IMPORTING_ORPHAN, COMPLETED, FAILED, CANCELLED }

    enum Op { START, PREPARE, ABANDON, REISSUE, REISSUE_OTHER, SIGN_SUSP, SIGN_SUSP_OTHER, SIGN_TERM, RESUME, TERMINAL, CLOSE_OWNER, CONSUME, ACTIVATE, ABORT }

    private static final String RUN = "run-table";
    private static final Snapshot S1 = Fixtures.suspended(RUN, 7);
    private static final Snapshot S2 = Fixtures.suspended(RUN, 8);
    private static final Snapshot DONE = Fixtures.snapshot(RUN, "completed", 9);

    /** A built situation: the authority, the (possibly closed) owner and import, an envelope to import. */
    private static final class World {
        final MemoryDirectory dir = new MemoryDirectory();
        final RunAuthority authority = Fixtures.open(dir);
        ActiveRun owner;
        RunImport imp;
        Envelope envelope;
    }

    private static Envelope forged() throws Exception {
        byte[] scope = new byte[32];
        scope[0] = 7;
        byte[] key = new byte[32];
        key[1] = 9;
        try (SecretKeyBytes k = SecretKeyBytes.copyOf(key, SecretAccess.grant()); AuthorityKey a = new AuthorityKey(scope, 1, k)) {
            return Envelopes.seal(S1, a::sign);
        }
    }

    private static World build(Situation s) throws Exception {
        World w = new World();
        w.envelope = forged();
        Cancellation c = Cancellation.none();
        switch (s) {
            case NONE -> { }
            case ACTIVE_OWNED -> w.owner = w.authority.start(new RunId(RUN), c);
            case ACTIVE_ORPHAN -> {
                w.owner = w.authority.start(new RunId(RUN), c);
                w.owner.close();
            }
            case SUSPENDED_OWNED, SUSPENDED_FREE, PREPARED, IMPORTING_CONSUMED, IMPORTING_ORPHAN -> {
                w.owner = w.authority.start(new RunId(RUN), c);
                w.envelope = w.owner.seal(S1, c).envelope();
                if (s != Situation.SUSPENDED_OWNED) {
                    w.owner.close();
                }
                if (s == Situation.PREPARED || s == Situation.IMPORTING_CONSUMED || s == Situation.IMPORTING_ORPHAN) {
                    w.imp = w.authority.prepareImport(w.envelope, c);
                }
                if (s == Situation.IMPORTING_CONSUMED || s == Situation.IMPORTING_ORPHAN) {
                    w.imp.consume(c);
                }
                if (s == Situation.IMPORTING_ORPHAN) {
                    try {
                        w.imp.abort();
                    } catch (AuthorityException.Uncertain expected) {
                        // abort after consume reports uncertain
                    }
                }
            }
            case COMPLETED -> {
                w.owner = w.authority.start(new RunId(RUN), c);
                w.envelope = w.owner.seal(DONE, c).envelope();
            }
            case FAILED -> {
                w.owner = w.authority.start(new RunId(RUN), c);
                w.owner.terminal(RunPhase.FAILED, c);
            }
            case CANCELLED -> {
                w.owner = w.authority.start(new RunId(RUN), c);
                w.owner.close();
                w.authority.abandon(new RunId(RUN), c);
            }
        }
        return w;
    }

    private static String run(World w, Op op) {
        Cancellation c = Cancellation.none();
        boolean needsOwner = op.ordinal() >= Op.SIGN_SUSP.ordinal() && op.ordinal() <= Op.CLOSE_OWNER.ordinal();
        boolean needsImport = op.ordinal() >= Op.CONSUME.ordinal();
        if ((needsOwner && w.owner == null) || (needsImport && w.imp == null)) {
            return "-";
        }
        try {
            switch (op) {
                case START -> w.authority.start(new RunId(RUN), c);
                case PREPARE -> w.authority.prepareImport(w.envelope, c);
                case ABANDON -> w.authority.abandon(new RunId(RUN), c);
                case REISSUE -> reissued(w, w.authority.reissue(S1));
                case REISSUE_OTHER -> w.authority.reissue(S2);
                case SIGN_SUSP -> w.owner.seal(S1, c);
                case SIGN_SUSP_OTHER -> w.owner.seal(S2, c);
                case SIGN_TERM -> w.owner.seal(DONE, c);
                case RESUME -> w.owner.resume(c);
                case TERMINAL -> w.owner.terminal(RunPhase.FAILED, c);
                case CLOSE_OWNER -> w.owner.close();
                case CONSUME -> w.imp.consume(c);
                case ACTIVATE -> w.imp.activate(c);
                case ABORT -> w.imp.abort();
            }
            return "OK";
        } catch (AuthorityException e) {
            return switch (e) {
                case AuthorityException.Busy b -> "BUSY";
                case AuthorityException.State st -> "STATE";
                case AuthorityException.Verification v -> "VERIFY";
                case AuthorityException.UnsupportedFormat f -> "UNSUPPORTED_FORMAT";
                case AuthorityException.Closed cl -> "CLOSED";
                case AuthorityException.Uncertain u -> "UNCERTAIN";
                case AuthorityException.Unavailable u -> "UNAVAILABLE";
                case AuthorityException.Configuration cf -> "CONFIGURATION";
                case AuthorityException.Cancelled cc -> "CANCELLED";
            };
        }
    }

    private static String durable(World w) throws Exception {
        return w.authority.inspect(new RunId(RUN)).map(r -> r.phase() + "@" + Long.toUnsignedString(r.runGeneration())).orElse("NONE");
    }

    @Test
    void everySituationTimesEveryOperation_matchesTheTable() throws Exception {
        Map<Situation, Map<Op, String>> table = parse();
        List<String> failures = new ArrayList<>();
        for (Situation s : Situation.values()) {
            for (Op op : Op.values()) {
                String expected = table.get(s).get(op);
                World w = build(s);
                String result = run(w, op);
                String got = result.equals("-") ? "-" : result + ":" + durable(w);
                if (!got.equals(expected)) {
                    failures.add(s + " x " + op + ": expected " + expected + ", got " + got);
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void prepareImport_unauthenticatedEnvelope_createsNoLockFile() throws Exception {
        World w = build(Situation.NONE);
        assertThat(run(w, Op.PREPARE)).isEqualTo("VERIFY");
        assertThat(w.dir.snapshotFiles().keySet()).containsExactlyInAnyOrder("identity.key", "identity.lock");
    }

    @Test
    void resume_invalidatesEarlierClaim_forever() throws Exception {
        World w = build(Situation.SUSPENDED_OWNED);
        Envelope first = w.envelope;
        w.owner.resume(Cancellation.none());
        w.owner.seal(S1, Cancellation.none()); // suspended again at generation 2, same payload
        w.owner.close();
        assertThat(run(withEnvelope(w, first), Op.PREPARE)).isEqualTo("VERIFY");
    }

    @Test
    void abandon_suspendedOrphan_tombstones_itsEnvelopeNeverImportsOrIsIssuedAgain() throws Exception {
        World w = build(Situation.SUSPENDED_FREE);
        RunRecord cancelled = w.authority.abandon(new RunId(RUN), Cancellation.none());
        assertThat(cancelled.phase()).isEqualTo(RunPhase.CANCELLED);
        assertThat(cancelled.snapshot()).as("a tombstone binds no snapshot").isNull();
        assertThat(run(w, Op.PREPARE)).isEqualTo("VERIFY");
        assertThat(run(w, Op.REISSUE)).isEqualTo("STATE");
        assertThat(w.dir.isLocked(RecordCodec.fileStem(RUN) + ".lock")).as("abandon keeps no lock").isFalse();
        assertThat(w.authority.outstandingLeases()).isZero();
    }

    /** Lock files are never unlinked: abandoning a run with no record must not leave one for good. */
    @Test
    void abandon_runWithNoRecord_isStateAndCreatesNoLockFile() throws Exception {
        World w = build(Situation.NONE);
        java.util.List<String> before = w.dir.list();
        for (int i = 0; i < 3; i++) {
            String id = "never-started-" + i;
            assertThatThrownBy(() -> w.authority.abandon(new RunId(id), Cancellation.none()))
                    .isInstanceOf(AuthorityException.State.class).hasMessageContaining("has no record");
        }
        assertThat(w.dir.list()).isEqualTo(before);
        assertThat(w.authority.outstandingLeases()).isZero();
    }

    /** A re-issued envelope must be the one the situation's suspend gave, byte for byte. */
    private static void reissued(World w, Envelope again) {
        assertThat(again.toBinary()).isEqualTo(w.envelope.toBinary());
    }

    private static World withEnvelope(World w, Envelope e) {
        w.envelope = e;
        return w;
    }

    private static Map<Situation, Map<Op, String>> parse() {
        Map<Situation, Map<Op, String>> table = new LinkedHashMap<>();
        String[] lines = TABLE.strip().split("\n");
        String[] header = lines[0].trim().split("\\s+");
        assertThat(header).hasSize(Op.values().length + 1);
        for (int i = 1; i < header.length; i++) {
            assertThat(header[i]).isEqualTo(Op.values()[i - 1].name());
        }
        for (int l = 1; l < lines.length; l++) {
            String[] cells = lines[l].trim().split("\\s+");
            assertThat(cells).as("row " + cells[0]).hasSize(Op.values().length + 1);
            Map<Op, String> row = new LinkedHashMap<>();
            for (int i = 1; i < cells.length; i++) {
                row.put(Op.values()[i - 1], cells[i]);
            }
            table.put(Situation.valueOf(cells[0]), row);
        }
        assertThat(table.keySet()).containsExactly(Situation.values());
        return table;
    }
}
