package spice.authority.host.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store's file: rules, settings, schema, one writer, and the crash marker of a killed writer. */
class HostStoreFilesTest {
    private static Path privateDir(Path tmp) throws Exception {
        Path d = tmp.resolve("store");
        Files.createDirectories(d);
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
        return d;
    }

    @Test
    void created_0600_in_0700_with_every_setting_and_strict_tables(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("new/dir/host.db");
        try (HostStore s = HostStore.open(file)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS)))
                    .isEqualTo("rw-------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())))
                    .isEqualTo("rwx------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(Path.of(file + "-wal"))))
                    .isEqualTo("rw-------");
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
                assertThat(Schema.pragma(c, "journal_mode")).isEqualTo("wal");
                assertThat(Schema.pragma(c, "application_id")).isEqualTo(Integer.toString(Schema.APPLICATION_ID));
                assertThat(Schema.pragma(c, "user_version")).isEqualTo("1");
                try (ResultSet r = st.executeQuery("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")) {
                    int n = 0;
                    while (r.next()) {
                        n++;
                        assertThat(r.getString(2)).as(r.getString(1)).endsWith("STRICT");
                    }
                    assertThat(n).isEqualTo(Schema.TABLES.size());
                }
            }
            // The writer's own connection holds synchronous=FULL, foreign keys, no trusted schema.
            assertThat(Schema.pragma(s.db(), "synchronous")).isEqualTo("2");
            assertThat(Schema.pragma(s.db(), "foreign_keys")).isEqualTo("1");
            assertThat(Schema.pragma(s.db(), "trusted_schema")).isEqualTo("0");
        }
        assertThat(System.getProperty("org.sqlite.tmpdir")).doesNotStartWith("/tmp/").doesNotStartWith("/var/tmp/");
        Path nativeDir = Path.of(System.getProperty("org.sqlite.tmpdir"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(nativeDir, LinkOption.NOFOLLOW_LINKS)))
                .isEqualTo("rwx------");
    }

    @Test
    void files_that_break_the_rules_are_refused(@TempDir Path tmp) throws Exception {
        Path dir = privateDir(tmp);
        Path file = dir.resolve("host.db");
        HostStore.open(file).close();

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining("rw-r--r--").hasMessageContaining("0600");
        assertThatThrownBy(() -> Inspection.of(file)).isInstanceOf(StoreException.class).hasMessageContaining("0600");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));

        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-x---"));
        assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining("store directory").hasMessageContaining("0700");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));

        Path link = dir.resolve("link.db");
        Files.createSymbolicLink(link, file);
        assertThatThrownBy(() -> HostStore.open(link)).isInstanceOf(StoreException.class)
                .hasMessageContaining("symbolic link");

        Files.setAttribute(file, "unix:uid", 4242, LinkOption.NOFOLLOW_LINKS);
        assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining("owned by uid 4242");
        Files.setAttribute(file, "unix:uid", (int) spice.authority.host.Users.ownUid(), LinkOption.NOFOLLOW_LINKS);
        HostStore.open(file).close();
    }

    @Test
    void a_setting_that_does_not_hold_refuses_the_store(@TempDir Path tmp) throws Exception {
        Path file = privateDir(tmp).resolve("host.db");
        assertThatThrownBy(() -> HostStore.open(file, FaultyDoor.pragmas(Map.of("journal_mode", "delete"))))
                .isInstanceOf(StoreException.class).hasMessageContaining("journal_mode reads delete")
                .hasMessageContaining("write-ahead log");
        assertThatThrownBy(() -> HostStore.open(file, FaultyDoor.pragmas(Map.of("synchronous", "1"))))
                .isInstanceOf(StoreException.class).hasMessageContaining("synchronous reads 1");
        assertThatThrownBy(() -> HostStore.open(file, FaultyDoor.pragmas(Map.of("foreign_keys", "0"))))
                .isInstanceOf(StoreException.class).hasMessageContaining("foreign_keys");
        assertThatThrownBy(() -> HostStore.open(file, FaultyDoor.pragmas(Map.of("trusted_schema", "1"))))
                .isInstanceOf(StoreException.class).hasMessageContaining("trusted_schema");
        // Refused before a writer epoch: the lock was released, and the real door opens it.
        HostStore.open(file).close();
    }

    @Test
    void a_newer_schema_or_another_application_is_refused(@TempDir Path tmp) throws Exception {
        Path file = privateDir(tmp).resolve("host.db");
        HostStore.open(file).close();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
            st.execute("PRAGMA user_version = 2");
        }
        assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining("schema version 2 is newer");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
            st.execute("PRAGMA user_version = 1");
            st.execute("PRAGMA application_id = 7");
        }
        assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                .hasMessageContaining("not a spice-authority host store");
        Path other = privateDir(tmp.resolve("o")).resolve("other.db");
        Files.createFile(other, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + other); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE notes (x TEXT)");
        }
        assertThatThrownBy(() -> HostStore.open(other)).isInstanceOf(StoreException.class)
                .hasMessageContaining("not a spice-authority host store");
    }

    @Test
    void one_writer_per_file_in_this_process(@TempDir Path tmp) throws Exception {
        Path file = privateDir(tmp).resolve("host.db");
        try (HostStore s = HostStore.open(file)) {
            assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("already open in this process");
            // A reader is not a writer: inspect works while the host writes.
            assertThat(Inspection.of(file).runs()).isEmpty();
        }
        HostStore.open(file).close();
    }

    /**
     * A child process holds the WAL store as its writer and is killed with SIGKILL: while it lives a
     * second writer is refused; after, its lock is gone and exactly one crash marker names it.
     */
    @Test
    void a_killed_writer_leaves_one_crash_marker_and_its_lock_goes_with_it(@TempDir Path tmp) throws Exception {
        Path file = privateDir(tmp).resolve("host.db");
        HostStore.open(file).close(); // a clean open and close: no crash
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                "-Dorg.sqlite.tmpdir=" + System.getProperty("org.sqlite.tmpdir"),
                StoreChild.class.getName(), file.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String ready = out.readLine();
            assertThat(ready).as("the child opened the store").startsWith("READY ");
            assertThat(Path.of(file + "-wal")).exists();
            assertThatThrownBy(() -> HostStore.open(file)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("another process has it open");
            child.destroyForcibly(); // SIGKILL
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            try (HostStore s = HostStore.open(file)) {
                List<HostStore.CrashEpoch> crashes = s.crashes();
                assertThat(crashes).singleElement().satisfies(c -> {
                    assertThat(c.epoch()).isEqualTo(ready.substring("READY ".length()));
                    assertThat(c.pid()).isEqualTo(child.pid());
                });
            }
            assertThat(Inspection.of(file).crashEpochs()).hasSize(1);
        } finally {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
