package spice.authority.host.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;

/**
 * How the store reaches SQLite: the one seam tests replace (a fake door wraps the real
 * connection to refuse a setting or fail a commit). Production uses {@link #SQLITE}.
 */
interface Door {
    Connection connect(String url, Properties properties) throws SQLException;

    Door SQLITE = (url, properties) -> new org.sqlite.JDBC().connect(url, properties);
}
