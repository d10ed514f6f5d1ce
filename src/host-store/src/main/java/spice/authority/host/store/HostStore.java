package spice.authority.host.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import spice.authority.host.engine.Engine;
import spice.authority.host.engine.Event;
import spice.authority.host.engine.EventHistory;
import spice.authority.host.engine.Recorder;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.plan.ToolDefinition;

/**
 * The durable run store of one host application (RFC 0007 Phase 7): a SQLite file that records
 * every event, checkpoint and tool operation of the engine's runs as they happen, so that a host
 * restarted with nothing but this file picks up every suspended run exactly once
 * ({@link #recover}) and says which tool call a crash cut off.
 *
 * <pre>{@code
 * try (HostStore store = HostStore.open(HostStore.defaultPath("my-agent"));
 *      Engine engine = Engine.builder(model, plans).identity(identity).recorder(store).open(client)) {
 *     for (RecoveryDecision d : store.recover(engine)) { ... }   // after a crash: resumed or reported
 *     Run run = engine.start("run-1", definition, "hello");
 *     run.runTurn();
 *     run.suspend();                                            // the envelope is in the store
 * }
 * }</pre>
 *
 * <p>Guarantees:
 * <ul>
 *   <li>One writer per file: a second process (or a second open in this one) is refused; the
 *       lock goes with the process that held it. The file and directory meet the token file's
 *       rules (own, 0600 / 0700, no symbolic link); every setting is read back after opening.
 *   <li>Each event is one commit (WAL, {@code synchronous=FULL}): a tool runs only after its
 *       ToolCallStarted is durable, its result counts only after ToolCallCompleted is. The
 *       sequence must be exactly the next one. A checkpoint's payload is durable before the
 *       helper signs it, and the envelope is committed after; a SUSPENDED checkpoint's envelope
 *       commit is not synced on its own (the helper re-issues it for the durable payload, and the
 *       next synced commit makes it durable), a terminal's is.
 *   <li>The first failure poisons the store: every later record is refused, and the engine stops
 *       the run. A commit that reports an error is re-read, and the refusal says whether the
 *       re-read proves the record durable.
 *   <li>Each open starts a writer epoch that a clean {@link #close()} ends; {@link #crashes()}
 *       lists the epochs that never ended.
 * </ul>
 * Thread-safe (one connection, calls serialized).
 */
public final class HostStore implements Recorder, AutoCloseable {
    /** The most events a run may hold for {@link #recover} to trust it. */
    public static final int MAX_EVENTS_PER_RUN = 100_000;

    private static final byte[] GENESIS = new byte[32];
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path file;
    private final Connection db;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final String epoch;
    private final Map<String, Map<String, ToolDefinition>> tools = new HashMap<>();
    private String poisoned;
    private boolean closed;
    /** Prepared once per connection: the hot paths run the same few statements again and again. */
    private final Map<String, PreparedStatement> statements = new HashMap<>();
    private Statement control;

    private HostStore(Path file, Connection db, FileChannel lockChannel, FileLock lock, String epoch) {
        this.file = file;
        this.db = db;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.epoch = epoch;
    }

    /** The documented per-user default for {@code application}'s store (see docs/host-store.md). */
    public static Path defaultPath(String application) {
        return StoreFiles.defaultPath(application);
    }

    /**
     * Opens (creating it 0600, its directory 0700, if missing) the store at {@code file} as its one
     * writer, and starts a writer epoch.
     *
     * @throws StoreException refused (another writer, a file that breaks the rules, a setting that
     *     does not hold, a newer schema, not a host store) or failed; the message says which
     */
    public static HostStore open(Path file) throws StoreException {
        return open(file, Door.SQLITE);
    }

    static HostStore open(Path file, Door door) throws StoreException {
        Path abs = Objects.requireNonNull(file, "file").toAbsolutePath().normalize();
        Path dir = abs.getParent();
        StoreFiles.privateDirectory(dir);
        StoreFiles.privateNativeDirectory();
        Path lockFile = Path.of(abs + ".writer-lock");
        StoreFiles.requireOwnFile(lockFile, "store lock file", true);
        FileChannel ch = null;
        FileLock lock = null;
        Connection c = null;
        boolean ok = false;
        try {
            try {
                ch = FileChannel.open(lockFile, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                throw new StoreException("refused the store " + abs + ": it is already open in this process");
            } catch (IOException e) {
                throw new StoreException("cannot lock the store " + abs + ": " + e.getMessage(), e);
            }
            if (lock == null) {
                throw new StoreException("refused the store " + abs + ": another process has it open as its writer "
                        + "(one writer per store; it is released when that process ends)");
            }
            // RACE: SQLite opens the file by its path after these checks (JDBC takes no descriptor).
            // Only this user can rename or replace entries in the checked 0700 directory, and the
            // open refuses a symbolic link (SQLITE_OPEN_NOFOLLOW), so nobody else can swap the file
            // in between; the same holds for the lock file, opened with O_NOFOLLOW after its check.
            StoreFiles.requireOwnFile(abs, "store", true);
            for (String side : new String[] {"-wal", "-shm"}) {
                StoreFiles.requireOwnFile(Path.of(abs + side), "store's " + side.substring(1) + " file", false);
            }
            Properties p = new Properties();
            p.setProperty("open_mode", Integer.toString(0x00000002 | 0x00200000)); // READWRITE | NOFOLLOW
            try {
                c = door.connect("jdbc:sqlite:" + abs, p);
                Schema.configureWriter(c, abs.toString());
                Schema.createOrCheck(c, abs.toString());
            } catch (SQLException e) {
                throw new StoreException("cannot open the store " + abs + ": " + e.getMessage(), e);
            }
            String epoch = HexFormat.of().formatHex(randomBytes(16));
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO writer_epochs (epoch, pid, opened_at, closed_at) VALUES (?, ?, ?, NULL)")) {
                ps.setString(1, epoch);
                ps.setLong(2, ProcessHandle.current().pid());
                ps.setLong(3, System.currentTimeMillis());
                ps.executeUpdate();
            } catch (SQLException e) {
                throw new StoreException("cannot start a writer epoch in the store " + abs + ": " + e.getMessage(), e);
            }
            for (String side : new String[] {"-wal", "-shm"}) {
                StoreFiles.requireOwnFile(Path.of(abs + side), "store's " + side.substring(1) + " file", false);
            }
            ok = true;
            return new HostStore(abs, c, ch, lock, epoch);
        } finally {
            if (!ok) {
                closeQuietly(c);
                try {
                    if (lock != null) {
                        lock.release();
                    }
                    if (ch != null) {
                        ch.close();
                    }
                } catch (IOException ignored) {
                    // the refusal is what is reported
                }
            }
        }
    }

    /** The statement for {@code sql}, prepared once; its parameters are cleared. */
    private PreparedStatement ps(String sql) throws SQLException {
        PreparedStatement ps = statements.get(sql);
        if (ps == null) {
            ps = db.prepareStatement(sql);
            statements.put(sql, ps);
        } else {
            ps.clearParameters();
        }
        return ps;
    }

    private Statement control() throws SQLException {
        if (control == null) {
            control = db.createStatement();
        }
        return control;
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // nothing to add
            }
        }
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    public Path file() {
        return file;
    }

    /** This open's writer epoch. */
    public String epoch() {
        return epoch;
    }

    /** A writer epoch that never closed: its process died (or its machine stopped) while it wrote. */
    public record CrashEpoch(String epoch, long pid, long openedAtMillis) {
    }

    /** The writer epochs, other than this one, that never closed. A marker never authorizes replay. */
    public synchronized List<CrashEpoch> crashes() throws StoreException {
        requireOpen();
        try {
            return Inspection.crashes(db, epoch);
        } catch (SQLException e) {
            throw new StoreException("cannot read the writer epochs of " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * The one call a restarted host makes: for each run of the store that is not over, resume it
     * through {@code engine} (a SUSPENDED run, whose envelope the helper verifies and whose old
     * owner it proves dead), or report why not. Each decision is also kept in the store. See
     * {@link Recovery} for the rules.
     *
     * @throws StoreException the store could not be read at all
     */
    public synchronized List<RecoveryDecision> recover(Engine engine) throws StoreException {
        requireOpen();
        return new Recovery(this, engine).run();
    }

    // ---- the recorder -------------------------------------------------------------------------

    @Override
    public synchronized void begin(RunFacts run) throws RecordingException {
        write("run " + run.runId() + " could not begin", () -> {
            StoredRun existing = readRun(run.runId());
            if (!run.imported()) {
                if (existing != null) {
                    throw new RecordingException("run " + run.runId() + " is already in the store " + file, null);
                }
                insertRun(run, "STARTING", 0);
            } else if (existing != null) {
                // Same-store recovery: the run continues after its checkpoint.
                if (!RunPhase.SUSPENDED.name().equals(existing.phase()) || existing.lastSequence() != run.firstSequence() - 1) {
                    throw new RecordingException("run " + run.runId() + " is " + existing.phase() + " at "
                            + Long.toUnsignedString(existing.lastSequence()) + " in the store, not SUSPENDED at "
                            + Long.toUnsignedString(run.firstSequence() - 1), null);
                }
                {
            PreparedStatement ps = ps("UPDATE runs SET epoch = ? WHERE run_id = ?");
                    ps.setString(1, epoch);
                    ps.setString(2, run.runId());
                    ps.executeUpdate();
                }
            } else {
                // Imported from elsewhere: its envelope is its first (signed) checkpoint.
                long last = run.firstSequence() - 1;
                insertRun(run, RunPhase.SUSPENDED.name(), last);
                spice.authority.snapshot.envelope.Envelope env;
                try {
                    env = spice.authority.snapshot.envelope.Envelope.parse(run.importedEnvelope());
                } catch (spice.authority.snapshot.envelope.EnvelopeRejectedException e) {
                    throw new RecordingException("the envelope of run " + run.runId() + " does not parse", e);
                }
                insertCheckpoint(run.runId(), last, "suspended", env.payload(), run.importedEnvelope(), "signed");
            }
            return null;
        }, null);
        tools.put(run.runId(), byName(run.tools()));
    }

    private static Map<String, ToolDefinition> byName(List<ToolDefinition> defs) {
        Map<String, ToolDefinition> m = new HashMap<>();
        for (ToolDefinition d : defs) {
            m.put(d.name(), d);
        }
        return m;
    }

    private void insertRun(RunFacts run, String phase, long last) throws SQLException {
        {
            PreparedStatement ps = ps("INSERT INTO runs (run_id, phase, first_sequence, last_sequence, "
                + "last_digest, tool_plan_id, plan_fingerprint, compatibility_identity, epoch) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
            ps.setString(1, run.runId());
            ps.setString(2, phase);
            ps.setLong(3, run.firstSequence());
            ps.setLong(4, last);
            ps.setBytes(5, GENESIS);
            ps.setString(6, run.plan().toolPlanId());
            ps.setString(7, run.plan().fingerprint());
            ps.setString(8, run.plan().snapshotCompatibilityIdentity());
            ps.setString(9, epoch);
            ps.executeUpdate();
        }
    }

    @Override
    public synchronized void event(Event e) throws RecordingException {
        byte[][] digest = new byte[1][];
        write("event " + Long.toUnsignedString(e.sequence()) + " of run " + e.runId() + " could not be recorded", () -> {
            digest[0] = insertEvent(e);
            return null;
        }, () -> eventIs(e, digest[0]));
    }

    /** Inserts {@code e} (exactly the next), its tool operation and the run's new head; returns its digest. */
    private byte[] insertEvent(Event e) throws SQLException, RecordingException {
        StoredRun run = readRun(e.runId());
        if (run == null) {
            throw new RecordingException("run " + e.runId() + " is not in the store", null);
        }
        if (e.sequence() != run.lastSequence() + 1) {
            throw new RecordingException("event " + Long.toUnsignedString(e.sequence()) + " of run " + e.runId()
                    + " is not the next one (the store is at " + Long.toUnsignedString(run.lastSequence()) + ")", null);
        }
        byte[] digest = digest(run.lastDigest(), e);
        {
            PreparedStatement ps = ps("INSERT INTO events (run_id, sequence, kind, turn, call_id, "
                + "message_id, tool, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
            ps.setString(1, e.runId());
            ps.setLong(2, e.sequence());
            ps.setString(3, e.type().display());
            ps.setInt(4, e.turn());
            ps.setString(5, e.callId());
            ps.setString(6, e.messageId());
            ps.setString(7, e.toolName());
            ps.setBytes(8, digest);
            ps.executeUpdate();
        }
        switch (e.type()) {
            case TOOL_CALL_STARTED -> {
                ToolDefinition d = tools.getOrDefault(e.runId(), Map.of()).get(e.toolName());
                if (d == null) {
                    throw new RecordingException("run " + e.runId() + " started tool " + e.toolName()
                            + ", which its plan (as recorded) does not have", null);
                }
                {
            PreparedStatement ps = ps("INSERT INTO tool_operations (run_id, call_id, tool, "
                        + "effect, replay_safety, start_sequence, terminal_sequence, terminal_kind) "
                        + "VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)");
                    ps.setString(1, e.runId());
                    ps.setString(2, e.callId());
                    ps.setString(3, e.toolName());
                    ps.setString(4, d.effect().wire());
                    ps.setString(5, d.replaySafety().wire());
                    ps.setLong(6, e.sequence());
                    ps.executeUpdate();
                }
            }
            case TOOL_CALL_COMPLETED -> {
                {
            PreparedStatement ps = ps("UPDATE tool_operations SET terminal_sequence = ?, "
                        + "terminal_kind = 'completed' WHERE run_id = ? AND call_id = ? AND tool = ? "
                        + "AND terminal_sequence IS NULL");
                    ps.setLong(1, e.sequence());
                    ps.setString(2, e.runId());
                    ps.setString(3, e.callId());
                    ps.setString(4, e.toolName());
                    if (ps.executeUpdate() != 1) {
                        throw new RecordingException("run " + e.runId() + ": call " + e.callId()
                                + " completed, but the store has no open operation of it", null);
                    }
                }
            }
            case RUN_RESUMED -> {
                // The checkpoint it resumed from never verifies again.
                {
            PreparedStatement ps = ps("UPDATE checkpoints SET state = 'superseded' "
                        + "WHERE run_id = ? AND state IN ('pending', 'signed')");
                    ps.setString(1, e.runId());
                    ps.executeUpdate();
                }
            }
            default -> {
            }
        }
        String phase = switch (e.type()) {
            case RUN_STARTED, RUN_RESUMED -> RunPhase.ACTIVE.name();
            case RUN_SUSPENDED -> RunPhase.SUSPENDED.name();
            case RUN_COMPLETED -> RunPhase.COMPLETED.name();
            case RUN_CANCELLED -> RunPhase.CANCELLED.name();
            case RUN_FAILED -> RunPhase.FAILED.name();
            default -> run.phase();
        };
        {
            PreparedStatement ps = ps("UPDATE runs SET last_sequence = ?, last_digest = ?, phase = ?, "
                + "epoch = ? WHERE run_id = ? AND last_sequence = ?");
            ps.setLong(1, e.sequence());
            ps.setBytes(2, digest);
            ps.setString(3, phase);
            ps.setString(4, epoch);
            ps.setString(5, e.runId());
            ps.setLong(6, run.lastSequence());
            if (ps.executeUpdate() != 1) {
                throw new RecordingException("run " + e.runId() + " moved on in the store meanwhile", null);
            }
        }
        return digest;
    }

    private boolean eventIs(Event e, byte[] digest) throws SQLException {
        if (digest == null) {
            return false;
        }
        {
            PreparedStatement ps = ps(
                "SELECT e.digest, r.last_sequence FROM events e JOIN runs r ON r.run_id = e.run_id "
                        + "WHERE e.run_id = ? AND e.sequence = ?");
            ps.setString(1, e.runId());
            ps.setLong(2, e.sequence());
            try (ResultSet r = ps.executeQuery()) {
                return r.next() && MessageDigest.isEqual(r.getBytes(1), digest) && r.getLong(2) == e.sequence();
            }
        }
    }

    @Override
    public synchronized void pending(String runId, long sequence, spice.authority.snapshot.payload.LifecycleStatus status,
                                     byte[] payload) throws RecordingException {
        write("the checkpoint at " + Long.toUnsignedString(sequence) + " of run " + runId + " could not be recorded", () -> {
            StoredRun run = readRun(runId);
            if (run == null) {
                throw new RecordingException("run " + runId + " is not in the store", null);
            }
            if (sequence != run.lastSequence() && sequence != run.lastSequence() + 1) {
                throw new RecordingException("a checkpoint of run " + runId + " at " + Long.toUnsignedString(sequence)
                        + " is neither at nor right after its last event " + Long.toUnsignedString(run.lastSequence()), null);
            }
            StoredCheckpoint at = readCheckpoint(runId, sequence);
            if (at != null) {
                if (!java.util.Arrays.equals(at.payload(), payload)) {
                    throw new RecordingException("run " + runId + " has another checkpoint at "
                            + Long.toUnsignedString(sequence), null);
                }
                return null; // the identical payload, recorded before
            }
            insertCheckpoint(runId, sequence, status.wire(), payload, null, "pending");
            return null;
        }, () -> {
            StoredCheckpoint c = readCheckpoint(runId, sequence);
            return c != null && java.util.Arrays.equals(c.payload(), payload);
        });
    }

    private void insertCheckpoint(String runId, long sequence, String status, byte[] payload, byte[] envelope,
                                  String state) throws SQLException {
        {
            PreparedStatement ps = ps("INSERT INTO checkpoints (run_id, sequence, status, payload, "
                + "payload_sha256, envelope, state) VALUES (?, ?, ?, ?, ?, ?, ?)");
            ps.setString(1, runId);
            ps.setLong(2, sequence);
            ps.setString(3, status);
            ps.setBytes(4, payload);
            ps.setBytes(5, sha256(payload));
            ps.setBytes(6, envelope);
            ps.setString(7, state);
            ps.executeUpdate();
        }
    }

    @Override
    public synchronized void signed(String runId, long sequence, byte[] envelope, Event completing)
            throws RecordingException {
        byte[][] digest = new byte[1][];
        // A SUSPENDED checkpoint's envelope is re-issuable: the helper gives the identical envelope for
        // its durable payload again. Its commit is therefore not synced on its own (synchronous=NORMAL
        // for this one transaction): a killed process cannot lose it (it is in the WAL), a power cut
        // can, and then recover() asks the helper again; the next synced commit makes it durable. A
        // terminal's envelope is never re-issued, so its commit is synced like every other.
        boolean reissuable = reissuable(runId, sequence);
        if (reissuable) {
            setSynchronous("NORMAL", "1");
        }
        try {
            write("the envelope of the checkpoint at " + Long.toUnsignedString(sequence) + " of run " + runId
                    + " could not be recorded", () -> {
                signedInTransaction(runId, sequence, envelope, completing, digest);
                return null;
            }, () -> {
                StoredCheckpoint c = readCheckpoint(runId, sequence);
                return c != null && "signed".equals(c.state()) && java.util.Arrays.equals(c.envelope(), envelope)
                        && (completing == null || digest[0] == null || eventIs(completing, digest[0]));
            });
        } finally {
            if (reissuable) {
                setSynchronous("FULL", "2");
            }
        }
    }

    /** Whether the checkpoint at {@code sequence} is a SUSPENDED payload, whose envelope the helper re-issues. */
    private boolean reissuable(String runId, long sequence) throws RecordingException {
        if (poisoned != null || closed) {
            return false; // write() refuses with the reason
        }
        try {
            PreparedStatement ps = ps("SELECT status FROM checkpoints WHERE run_id = ? AND sequence = ?");
            ps.setString(1, runId);
            ps.setLong(2, sequence);
            try (ResultSet r = ps.executeQuery()) {
                return r.next() && "suspended".equals(r.getString(1));
            }
        } catch (SQLException e) {
            poisoned = e.getMessage();
            throw new RecordingException("the checkpoint at " + Long.toUnsignedString(sequence) + " of run " + runId
                    + " could not be read: " + e.getMessage(), e);
        }
    }

    /** Sets {@code synchronous} and reads it back; a setting that does not hold poisons the store. */
    private void setSynchronous(String value, String readBack) throws RecordingException {
        try (Statement s = db.createStatement()) {
            s.execute("PRAGMA synchronous = " + value);
            String got = Schema.pragma(db, "synchronous");
            if (!readBack.equals(got)) {
                throw new SQLException("PRAGMA synchronous reads " + got + " after it was set to " + value);
            }
        } catch (SQLException e) {
            if (poisoned == null) {
                poisoned = e.getMessage();
            }
            throw new RecordingException("the store " + file + " could not set synchronous=" + value + ": "
                    + e.getMessage(), e);
        }
    }

    private void signedInTransaction(String runId, long sequence, byte[] envelope, Event completing, byte[][] digest)
            throws SQLException, RecordingException {
        StoredCheckpoint c = readCheckpoint(runId, sequence);
        if (c == null) {
            throw new RecordingException("run " + runId + " has no checkpoint at " + Long.toUnsignedString(sequence)
                    + " to sign", null);
        }
        if (c.state().equals("signed") && java.util.Arrays.equals(c.envelope(), envelope)) {
            return; // recorded before
        }
        if (!c.state().equals("pending")) {
            throw new RecordingException("the checkpoint at " + Long.toUnsignedString(sequence) + " of run " + runId
                    + " is " + c.state() + ", not pending", null);
        }
        StoredRun run = readRun(runId);
        if (completing != null && run.lastSequence() == completing.sequence() - 1) {
            digest[0] = insertEvent(completing);
        }
        {
            PreparedStatement ps = ps("UPDATE checkpoints SET envelope = ?, state = 'signed' "
                + "WHERE run_id = ? AND sequence = ? AND state = 'pending'");
            ps.setBytes(1, envelope);
            ps.setString(2, runId);
            ps.setLong(3, sequence);
            ps.executeUpdate();
        }
    }

    // ---- transactions -------------------------------------------------------------------------

    @FunctionalInterface
    interface Work<T> {
        T run() throws SQLException, RecordingException;
    }

    @FunctionalInterface
    interface Check {
        boolean holds() throws SQLException;
    }

    /**
     * One immediate transaction. A failure before the commit rolls back; a commit that reports an
     * error is re-read with {@code durable}. Either poisons the store: its first failure is final.
     */
    private <T> T write(String what, Work<T> work, Check durable) throws RecordingException {
        if (closed) {
            throw new RecordingException(what + ": the store " + file + " is closed", null);
        }
        if (poisoned != null) {
            throw new RecordingException(what + ": the store " + file + " failed earlier (" + poisoned
                    + ") and records nothing more", null);
        }
        T result;
        try {
            Statement s = control();
            s.execute("BEGIN IMMEDIATE");
            try {
                result = work.run();
            } catch (SQLException | RecordingException | RuntimeException e) {
                try {
                    s.execute("ROLLBACK");
                } catch (SQLException r) {
                    e.addSuppressed(r);
                }
                if (e instanceof RecordingException refused && !(refused.getCause() instanceof SQLException)) {
                    // A refusal of the engine's call, nothing written: the store itself is sound.
                    throw refused;
                }
                poisoned = e.getMessage();
                throw new RecordingException(what + ": " + e.getMessage(), e);
            }
            try {
                s.execute("COMMIT");
            } catch (SQLException e) {
                poisoned = "a commit failed: " + e.getMessage();
                boolean proven;
                try {
                    try {
                        s.execute("ROLLBACK");
                    } catch (SQLException ignored) {
                        // no transaction left open: the commit may have ended it
                    }
                    proven = durable != null && durable.holds();
                } catch (SQLException reread) {
                    proven = false;
                }
                throw new RecordingException(what + ": its commit failed (" + e.getMessage() + "); a re-read "
                        + (proven ? "proves it durable" : "does not prove it durable") + "; the store records nothing more", e);
            }
        } catch (SQLException e) {
            poisoned = e.getMessage();
            throw new RecordingException(what + ": " + e.getMessage(), e);
        }
        return result;
    }

    /** The store failed during recovery: poisoned like any other failure. */
    void poison(String why) {
        if (poisoned == null) {
            poisoned = why;
        }
    }

    // ---- reading ------------------------------------------------------------------------------

    record StoredRun(String runId, String phase, long firstSequence, long lastSequence, byte[] lastDigest,
                     String toolPlanId, String planFingerprint, String compatibilityIdentity) {
    }

    record StoredCheckpoint(String runId, long sequence, String status, byte[] payload, byte[] payloadSha256,
                            byte[] envelope, String state) {
    }

    Connection db() {
        return db;
    }

    String epochId() {
        return epoch;
    }

    StoredRun readRun(String runId) throws SQLException {
        {
            PreparedStatement ps = ps("SELECT run_id, phase, first_sequence, last_sequence, last_digest, "
                + "tool_plan_id, plan_fingerprint, compatibility_identity FROM runs WHERE run_id = ?");
            ps.setString(1, runId);
            try (ResultSet r = ps.executeQuery()) {
                return r.next() ? new StoredRun(r.getString(1), r.getString(2), r.getLong(3), r.getLong(4), r.getBytes(5),
                        r.getString(6), r.getString(7), r.getString(8)) : null;
            }
        }
    }

    StoredCheckpoint readCheckpoint(String runId, long sequence) throws SQLException {
        {
            PreparedStatement ps = ps("SELECT run_id, sequence, status, payload, payload_sha256, envelope, "
                + "state FROM checkpoints WHERE run_id = ? AND sequence = ?");
            ps.setString(1, runId);
            ps.setLong(2, sequence);
            try (ResultSet r = ps.executeQuery()) {
                return r.next() ? new StoredCheckpoint(r.getString(1), r.getLong(2), r.getString(3), r.getBytes(4),
                        r.getBytes(5), r.getBytes(6), r.getString(7)) : null;
            }
        }
    }

    /** The run's events after {@code cursor} up to {@code upTo}, as the engine's events. */
    synchronized List<Event> events(String runId, long cursor, long upTo) {
        List<Event> out = new ArrayList<>();
        try {
            PreparedStatement ps = ps("SELECT sequence, kind, turn, call_id, message_id, tool FROM events "
                + "WHERE run_id = ? AND sequence > ? AND sequence <= ? ORDER BY sequence");
            ps.setString(1, runId);
            ps.setLong(2, cursor);
            ps.setLong(3, upTo);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    out.add(new Event(r.getLong(1), runId, type(r.getString(2)), r.getInt(3), r.getString(4),
                            r.getString(5), r.getString(6)));
                }
            }
        } catch (SQLException | IllegalArgumentException e) {
            throw new IllegalStateException("the store " + file + " cannot read the events of run " + runId + ": "
                    + e.getMessage(), e);
        }
        return out;
    }

    /** The stored events of a run from before this engine, for {@link Engine#importRun(byte[], EventHistory)}. */
    EventHistory history(String runId, long oldest) {
        return new EventHistory() {
            @Override
            public long oldest() {
                return oldest;
            }

            @Override
            public List<Event> read(long cursor, long upTo) {
                return events(runId, cursor, upTo);
            }
        };
    }

    static Event.Type type(String display) {
        for (Event.Type t : Event.Type.values()) {
            if (t.display().equals(display)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown event kind");
    }

    /**
     * The chained digest of an event: SHA-256 of the previous event's digest (32 zero bytes for
     * a run's first stored event), the sequence, kind, turn and identifiers, each length-prefixed.
     */
    static byte[] digest(byte[] previous, Event e) {
        MessageDigest md = sha();
        md.update(previous);
        ByteBuffer b = ByteBuffer.allocate(12);
        b.putLong(e.sequence()).putInt(e.turn());
        md.update(b.array());
        for (String s : new String[] {e.type().display(), e.callId(), e.messageId(), e.toolName()}) {
            if (s == null) {
                md.update(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
            } else {
                byte[] u = s.getBytes(StandardCharsets.UTF_8);
                md.update(ByteBuffer.allocate(4).putInt(u.length).array());
                md.update(u);
            }
        }
        return md.digest();
    }

    static byte[] sha256(byte[] bytes) {
        return sha().digest(bytes);
    }

    private static MessageDigest sha() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] genesis() {
        return GENESIS.clone();
    }

    // ---- closing ------------------------------------------------------------------------------

    private void requireOpen() throws StoreException {
        if (closed) {
            throw new StoreException("the store " + file + " is closed");
        }
    }

    /**
     * Ends this writer epoch (a clean close is no crash) and releases the writer lock. A store
     * that failed earlier leaves its epoch open: that open did not end cleanly.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (poisoned == null) {
                try {
            PreparedStatement ps = ps("UPDATE writer_epochs SET closed_at = ? WHERE epoch = ?");
                    ps.setLong(1, System.currentTimeMillis());
                    ps.setString(2, epoch);
                    ps.executeUpdate();
                } catch (SQLException e) {
                    // the epoch stays open: the next open reports it, which is the truth
                }
            }
        } finally {
            for (PreparedStatement ps : statements.values()) {
                try {
                    ps.close();
                } catch (SQLException ignored) {
                    // the connection's close ends it
                }
            }
            closeQuietly(db);
            try {
                lock.release();
                lockChannel.close();
            } catch (IOException ignored) {
                // the lock goes with the process in any case
            }
        }
    }

    @Override
    public String toString() {
        return "HostStore[" + file + ", epoch " + epoch + (poisoned != null ? ", failed" : "") + (closed ? ", closed" : "")
                + "]";
    }
}
