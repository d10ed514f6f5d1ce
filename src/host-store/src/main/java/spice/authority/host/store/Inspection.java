package spice.authority.host.store;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * A read-only look at a store: its runs, checkpoints, open tool operations, crash epochs and
 * recovery decisions. Safe while a host writes (a WAL reader; no lock taken, nothing written).
 */
public record Inspection(Path file, List<RunSummary> runs, List<HostStore.CrashEpoch> crashEpochs,
                         List<Decision> decisions) {
    /** A run of the store. */
    public record RunSummary(String runId, String phase, long lastSequence, List<CheckpointSummary> checkpoints,
                             List<OpenCall> openToolCalls) {
    }

    /** A checkpoint: its sequence, its payload's status, and whether its envelope is there. */
    public record CheckpointSummary(long sequence, String status, String state, int payloadBytes, boolean envelope) {
    }

    /** A tool operation with a start and no terminal event. */
    public record OpenCall(String callId, String tool, String effect, String replaySafety, long startedSequence) {
    }

    /** A recorded recovery decision. */
    public record Decision(String runId, String decision, String reason, String detail, long decidedAtMillis) {
    }

    /** Reads {@code file} without writing to it; refused where the store's file rules do not hold. */
    public static Inspection of(Path file) throws StoreException {
        Path abs = file.toAbsolutePath().normalize();
        StoreFiles.requireOwnDirectory(abs.getParent());
        if (!StoreFiles.requireOwnFile(abs, "store", false)) {
            throw new StoreException("no store at " + abs);
        }
        for (String side : new String[] {"-wal", "-shm"}) {
            StoreFiles.requireOwnFile(Path.of(abs + side), "store's " + side.substring(1) + " file", false);
        }
        StoreFiles.privateNativeDirectory();
        // RACE: opened by path after the checks, as HostStore.open: the 0700 directory is ours alone,
        // and the open refuses a symbolic link.
        Properties p = new Properties();
        p.setProperty("open_mode", Integer.toString(0x00000001 | 0x00200000)); // READONLY | NOFOLLOW
        try (Connection c = Door.SQLITE.connect("jdbc:sqlite:" + abs, p)) {
            Schema.configureReader(c, abs.toString());
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN"); // one snapshot of the whole store
                try {
                    Schema.check(c, abs.toString(), Integer.parseInt(Schema.pragma(c, "user_version")),
                            Integer.parseInt(Schema.pragma(c, "application_id")));
                    return new Inspection(abs, runs(c), crashes(c, null), decisions(c));
                } finally {
                    s.execute("ROLLBACK");
                }
            }
        } catch (SQLException | NumberFormatException e) {
            throw new StoreException("cannot read the store " + abs + ": " + e.getMessage(), e);
        }
    }

    private static List<RunSummary> runs(Connection c) throws SQLException {
        List<RunSummary> out = new ArrayList<>();
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT run_id, phase, last_sequence FROM runs ORDER BY run_id")) {
            while (r.next()) {
                String id = r.getString(1);
                out.add(new RunSummary(id, r.getString(2), r.getLong(3), checkpoints(c, id), openCalls(c, id)));
            }
        }
        return out;
    }

    private static List<CheckpointSummary> checkpoints(Connection c, String runId) throws SQLException {
        List<CheckpointSummary> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT sequence, status, state, length(payload), "
                + "envelope IS NOT NULL FROM checkpoints WHERE run_id = ? ORDER BY sequence")) {
            ps.setString(1, runId);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    out.add(new CheckpointSummary(r.getLong(1), r.getString(2), r.getString(3), r.getInt(4),
                            r.getInt(5) == 1));
                }
            }
        }
        return out;
    }

    static List<OpenCall> openCalls(Connection c, String runId) throws SQLException {
        List<OpenCall> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT call_id, tool, effect, replay_safety, start_sequence "
                + "FROM tool_operations WHERE run_id = ? AND terminal_sequence IS NULL ORDER BY start_sequence")) {
            ps.setString(1, runId);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    out.add(new OpenCall(r.getString(1), r.getString(2), r.getString(3), r.getString(4), r.getLong(5)));
                }
            }
        }
        return out;
    }

    /** The epochs that never closed, other than {@code current} (null: all of them). */
    static List<HostStore.CrashEpoch> crashes(Connection c, String current) throws SQLException {
        List<HostStore.CrashEpoch> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT epoch, pid, opened_at FROM writer_epochs "
                + "WHERE closed_at IS NULL AND epoch IS NOT ? ORDER BY opened_at")) {
            ps.setString(1, current);
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) {
                    out.add(new HostStore.CrashEpoch(r.getString(1), r.getLong(2), r.getLong(3)));
                }
            }
        }
        return out;
    }

    private static List<Decision> decisions(Connection c) throws SQLException {
        List<Decision> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(
                "SELECT run_id, decision, reason, detail, decided_at FROM recovery_decisions ORDER BY id")) {
            while (r.next()) {
                out.add(new Decision(r.getString(1), r.getString(2), r.getString(3), r.getString(4), r.getLong(5)));
            }
        }
        return out;
    }
}
