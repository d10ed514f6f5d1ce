package spice.authority.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.nio.file.Path;

/**
 * The SQLite checkpoint store a user would pick instead of the helper, as LangGraph's
 * {@code SqliteSaver} lays it out: one {@code checkpoints} table keyed by thread, namespace and
 * checkpoint ID, in WAL mode with {@code synchronous=FULL} (every commit fsyncs the WAL), one
 * auto-committed {@code INSERT OR REPLACE} per {@code put}. Benchmark code only (sqlite-jdbc is a
 * dependency of bench, never of the app).
 */
final class SqliteSaver implements AutoCloseable {
    private final Connection db;
    private final PreparedStatement put;
    private long checkpoints;

    SqliteSaver(Path file) throws SQLException {
        db = DriverManager.getConnection("jdbc:sqlite:" + file);
        try (Statement s = db.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("PRAGMA synchronous=FULL");
            s.execute("CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', "
                    + "checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, "
                    + "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))");
        }
        db.setAutoCommit(true);
        put = db.prepareStatement("INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                + "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)");
    }

    /** {@code journal_mode} and {@code synchronous} as SQLite reports them, to print beside the figures. */
    String mode() throws SQLException {
        try (Statement s = db.createStatement()) {
            var r1 = s.executeQuery("PRAGMA journal_mode");
            r1.next();
            String j = r1.getString(1);
            var r2 = s.executeQuery("PRAGMA synchronous");
            r2.next();
            return "journal_mode=" + j + ", synchronous=" + r2.getInt(1) + " (2 = FULL)";
        }
    }

    /** One durable put of {@code data} as the next checkpoint of {@code thread}. */
    void put(String thread, byte[] data) throws SQLException {
        long id = ++checkpoints;
        put.setString(1, thread);
        put.setString(2, "");
        put.setString(3, Long.toString(id));
        put.setString(4, id > 1 ? Long.toString(id - 1) : null);
        put.setString(5, "json");
        put.setBytes(6, data);
        put.setBytes(7, "{\"source\":\"loop\",\"step\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        put.executeUpdate();
    }

    @Override
    public void close() throws SQLException {
        put.close();
        db.close();
    }
}
