package spice.authority.host.store;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * Schema version 1 of the host store and the settings every connection must hold, read back
 * after opening. Every table is STRICT. Sequences are the engine's unsigned 64-bit numbers kept in
 * SQLite's signed INTEGER by their bit pattern (compared for equality and successor only).
 */
final class Schema {
    /** {@code PRAGMA application_id}: "SPHS", a spice-authority host store. */
    static final int APPLICATION_ID = 0x53504853;
    /** {@code PRAGMA user_version} of this schema. */
    static final int VERSION = 1;
    /** {@code PRAGMA busy_timeout}, milliseconds: a reader (inspect) never holds a writer longer. */
    static final int BUSY_TIMEOUT_MS = 2000;

    static final List<String> TABLES = List.of("store_meta", "writer_epochs", "runs", "events", "checkpoints",
            "tool_operations", "recovery_decisions");

    private static final List<String> DDL = List.of(
            "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
            "CREATE TABLE writer_epochs (epoch TEXT PRIMARY KEY, pid INTEGER NOT NULL, opened_at INTEGER NOT NULL, "
                    + "closed_at INTEGER) STRICT",
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, phase TEXT NOT NULL, first_sequence INTEGER NOT NULL, "
                    + "last_sequence INTEGER NOT NULL, last_digest BLOB NOT NULL, tool_plan_id TEXT NOT NULL, "
                    + "plan_fingerprint TEXT NOT NULL, compatibility_identity TEXT NOT NULL, "
                    + "epoch TEXT NOT NULL REFERENCES writer_epochs(epoch)) STRICT",
            "CREATE TABLE events (run_id TEXT NOT NULL REFERENCES runs(run_id), sequence INTEGER NOT NULL, "
                    + "kind TEXT NOT NULL, turn INTEGER NOT NULL, call_id TEXT, message_id TEXT, tool TEXT, "
                    + "digest BLOB NOT NULL, PRIMARY KEY (run_id, sequence)) STRICT",
            "CREATE TABLE checkpoints (run_id TEXT NOT NULL REFERENCES runs(run_id), sequence INTEGER NOT NULL, "
                    + "status TEXT NOT NULL, payload BLOB NOT NULL, payload_sha256 BLOB NOT NULL, envelope BLOB, "
                    + "state TEXT NOT NULL CHECK (state IN ('pending', 'signed', 'superseded')), "
                    + "PRIMARY KEY (run_id, sequence)) STRICT",
            "CREATE TABLE tool_operations (run_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, "
                    + "effect TEXT NOT NULL, replay_safety TEXT NOT NULL, start_sequence INTEGER NOT NULL, "
                    + "terminal_sequence INTEGER, terminal_kind TEXT, PRIMARY KEY (run_id, call_id), "
                    + "FOREIGN KEY (run_id, start_sequence) REFERENCES events(run_id, sequence), "
                    + "FOREIGN KEY (run_id, terminal_sequence) REFERENCES events(run_id, sequence)) STRICT",
            "CREATE TABLE recovery_decisions (id INTEGER PRIMARY KEY, epoch TEXT NOT NULL, run_id TEXT NOT NULL, "
                    + "decision TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL, decided_at INTEGER NOT NULL) "
                    + "STRICT");

    private Schema() {
    }

    /**
     * Applies the settings to a writer connection and reads every one back; a setting that does
     * not hold (a file system that cannot do WAL, say) refuses the store.
     */
    static void configureWriter(Connection c, String file) throws SQLException, StoreException {
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA busy_timeout = " + BUSY_TIMEOUT_MS);
            s.execute("PRAGMA trusted_schema = OFF");
            s.execute("PRAGMA foreign_keys = ON");
            s.execute("PRAGMA journal_mode = WAL");
            s.execute("PRAGMA synchronous = FULL");
        }
        requireSetting(c, file, "journal_mode", "wal");
        requireSetting(c, file, "synchronous", "2");
        requireSetting(c, file, "foreign_keys", "1");
        requireSetting(c, file, "trusted_schema", "0");
    }

    /** The settings of a read-only connection (inspect): no writes, no schema trust. */
    static void configureReader(Connection c, String file) throws SQLException, StoreException {
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA busy_timeout = " + BUSY_TIMEOUT_MS);
            s.execute("PRAGMA trusted_schema = OFF");
            s.execute("PRAGMA query_only = ON");
        }
        requireSetting(c, file, "trusted_schema", "0");
        requireSetting(c, file, "query_only", "1");
    }

    static String pragma(Connection c, String name) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("PRAGMA " + name)) {
            return r.next() ? r.getString(1) : null;
        }
    }

    private static void requireSetting(Connection c, String file, String name, String expected)
            throws SQLException, StoreException {
        String got = pragma(c, name);
        if (got == null || !got.equalsIgnoreCase(expected)) {
            throw new StoreException("refused the store " + file + ": PRAGMA " + name + " reads " + got + " after it was "
                    + "set, not " + expected + (name.equals("journal_mode")
                            ? " (this file system cannot hold a write-ahead log, or another connection holds the file)"
                            : ""));
        }
    }

    /**
     * Creates schema version 1 in an empty database, or checks the version of an existing one: a
     * newer version is refused, an older one (there is none yet) would need an explicit migration,
     * and a database of another application is refused. One immediate transaction.
     */
    static void createOrCheck(Connection c, String file) throws SQLException, StoreException {
        try (Statement s = c.createStatement()) {
            s.execute("BEGIN IMMEDIATE");
            boolean ok = false;
            try {
                int version = Integer.parseInt(pragma(c, "user_version"));
                int app = Integer.parseInt(pragma(c, "application_id"));
                int objects;
                try (ResultSet r = s.executeQuery("SELECT count(*) FROM sqlite_schema")) {
                    objects = r.next() ? r.getInt(1) : 0;
                }
                if (version == 0 && app == 0 && objects == 0) {
                    for (String ddl : DDL) {
                        s.execute(ddl);
                    }
                    // No snapshot format here: each checkpoint's payload names its own, so one store holds
                    // v1alpha2 and v1alpha3 runs. Stores created before kept a row 'snapshot_format'
                    // (v1alpha2); it is data, not layout, and nothing reads it.
                    s.execute("INSERT INTO store_meta (key, value) VALUES ('store', 'spice-authority host store'), "
                            + "('created_at', '"
                            + System.currentTimeMillis() + "')");
                    s.execute("PRAGMA application_id = " + APPLICATION_ID);
                    s.execute("PRAGMA user_version = " + VERSION);
                } else {
                    check(c, file, version, app);
                }
                s.execute("COMMIT");
                ok = true;
            } finally {
                if (!ok) {
                    try {
                        s.execute("ROLLBACK");
                    } catch (SQLException ignored) {
                        // the failure that brought us here is the one reported
                    }
                }
            }
        }
    }

    /** Checks the version, the application and that every table is there and STRICT. */
    static void check(Connection c, String file, int version, int app) throws SQLException, StoreException {
        if (app != APPLICATION_ID) {
            throw new StoreException("refused " + file + ": it is not a spice-authority host store (application_id "
                    + Integer.toHexString(app) + ")");
        }
        if (version > VERSION) {
            throw new StoreException("refused the store " + file + ": its schema version " + version + " is newer than "
                    + "this library's " + VERSION + "; use a newer spice-authority host store");
        }
        if (version < VERSION) {
            throw new StoreException("refused the store " + file + ": its schema version " + version + " is older than "
                    + VERSION + " and is migrated only by an explicit step");
        }
        for (String table : TABLES) {
            try (var ps = c.prepareStatement("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?")) {
                ps.setString(1, table);
                try (ResultSet r = ps.executeQuery()) {
                    if (!r.next()) {
                        throw new StoreException("refused the store " + file + ": table " + table + " is missing");
                    }
                    String sql = r.getString(1);
                    if (sql == null || !sql.stripTrailing().endsWith("STRICT")) {
                        throw new StoreException("refused the store " + file + ": table " + table + " is not STRICT");
                    }
                }
            }
        }
    }
}
