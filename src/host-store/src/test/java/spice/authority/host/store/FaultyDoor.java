package spice.authority.host.store;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * A fake door to SQLite: the real connection, wrapped to fail one commit once armed (before or
 * after it took effect), or to answer chosen PRAGMA reads with other values. The store's own code
 * is untouched.
 */
final class FaultyDoor implements Door {
    private final Predicate<String> transaction;
    private final boolean afterCommit;
    private final Map<String, String> pragmas;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final StringBuilder sqlSinceBegin = new StringBuilder();

    private FaultyDoor(Predicate<String> transaction, boolean afterCommit, Map<String, String> pragmas) {
        this.transaction = transaction;
        this.afterCommit = afterCommit;
        this.pragmas = pragmas;
    }

    /** Once armed, the next commit of a transaction whose SQL matches fails, and nothing of it is written. */
    static FaultyDoor failingCommit(Predicate<String> transactionSql) {
        return new FaultyDoor(transactionSql, false, Map.of());
    }

    /** Once armed, the next commit takes effect and then reports a failure (an ambiguous commit). */
    static FaultyDoor failingAfterCommit() {
        return new FaultyDoor(s -> true, true, Map.of());
    }

    /** Answers {@code PRAGMA name} reads with the given values (a setting that does not hold). */
    static FaultyDoor pragmas(Map<String, String> answers) {
        return new FaultyDoor(s -> false, false, answers);
    }

    void arm() {
        armed.set(true);
    }

    @Override
    public Connection connect(String url, Properties properties) throws SQLException {
        Connection real = SQLITE.connect(url, properties);
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    Object out = invoke(real, m, args);
                    if (out instanceof java.sql.PreparedStatement ps && args != null && args[0] instanceof String sql) {
                        return prepared(ps, sql);
                    }
                    if (out instanceof Statement s) {
                        return statement(real, s);
                    }
                    return out;
                });
    }

    /** A prepared statement whose executions are recorded as part of the transaction's SQL. */
    private java.sql.PreparedStatement prepared(java.sql.PreparedStatement ps, String sql) {
        return (java.sql.PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {java.sql.PreparedStatement.class}, (proxy, m, args) -> {
                    if (m.getName().startsWith("execute")) {
                        sqlSinceBegin.append(sql).append('\n');
                    }
                    return invoke(ps, m, args);
                });
    }

    private Statement statement(Connection real, Statement s) {
        InvocationHandler h = (proxy, m, args) -> {
            if (m.getName().equals("execute") && args != null && args[0] instanceof String sql) {
                String q = sql.trim().toUpperCase(java.util.Locale.ROOT);
                if (q.startsWith("BEGIN")) {
                    sqlSinceBegin.setLength(0);
                }
                if (q.equals("COMMIT") && transaction.test(sqlSinceBegin.toString()) && armed.compareAndSet(true, false)) {
                    if (afterCommit) {
                        s.execute("COMMIT");
                    } else {
                        s.execute("ROLLBACK");
                    }
                    throw new SQLException("disk I/O error (injected)");
                }
            }
            if (m.getName().equals("executeQuery") && args != null && args[0] instanceof String sql) {
                String q = sql.trim();
                for (Map.Entry<String, String> p : pragmas.entrySet()) {
                    if (q.equalsIgnoreCase("PRAGMA " + p.getKey())) {
                        // Closed with its result set by the caller's try-with-resources on it.
                        Statement t = real.createStatement();
                        t.closeOnCompletion();
                        return t.executeQuery("SELECT '" + p.getValue() + "'");
                    }
                }
            }
            return invoke(s, m, args);
        };
        return (Statement) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Statement.class}, h);
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
