package spice.authority.host.store;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Where a store lives and the rules its files meet (those the CLI applies to the token file): the
 * directory is the user's own, mode 0700, not a symbolic link; the database (and its WAL, shared
 * memory and lock files) the user's own, no access for group or others, regular, not a link.
 * Creation uses 0700 and 0600. Also the private directory sqlite-jdbc unpacks its native library
 * into. POSIX only: elsewhere a store is refused with a message that says so.
 */
final class StoreFiles {
    static final Set<PosixFilePermission> DIR_MODE = PosixFilePermissions.fromString("rwx------");
    static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");
    /** The suffixes of SQLite's own files next to the database, and of the writer lock. */
    static final String[] SIDE_FILES = {"-wal", "-shm", ".writer-lock"};

    private StoreFiles() {
    }

    /**
     * The documented per-user default for a host application's store:
     * {@code $XDG_STATE_HOME/spice-authority/hosts/APP.db}, else
     * {@code ~/.local/state/spice-authority/hosts/APP.db}.
     */
    static Path defaultPath(String application) {
        if (application == null || !application.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) {
            throw new IllegalArgumentException("an application name is 1 to 64 of A-Z a-z 0-9 . _ - (first a letter or "
                    + "digit)");
        }
        String state = System.getenv("XDG_STATE_HOME");
        Path base = state != null && !state.isEmpty() && Path.of(state).isAbsolute() ? Path.of(state)
                : Path.of(System.getProperty("user.home"), ".local", "state");
        return base.resolve("spice-authority").resolve("hosts").resolve(application + ".db");
    }

    /** Creates {@code dir} (and missing parents) 0700, then checks it. */
    static void privateDirectory(Path dir) throws StoreException {
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Path parent = dir.getParent();
                if (parent != null && !Files.exists(parent, LinkOption.NOFOLLOW_LINKS)) {
                    privateDirectory(parent);
                }
                try {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_MODE));
                } catch (FileAlreadyExistsException raced) {
                    // checked below like any other
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new StoreException("cannot create the store directory " + dir + ": " + e.getMessage(), e);
        }
        requireOwnDirectory(dir);
    }

    static void requireOwnDirectory(Path dir) throws StoreException {
        PosixFileAttributes a = attributes(dir, "store directory");
        if (a == null) {
            throw new StoreException("refused the store directory " + dir + ": it does not exist");
        }
        if (a.isSymbolicLink() || !a.isDirectory()) {
            throw new StoreException("refused the store directory " + dir + ": it is " + (a.isSymbolicLink()
                    ? "a symbolic link" : "not a directory"));
        }
        requireOwnerAndMode(dir, a, "store directory", true);
    }

    /**
     * Checks {@code file} if it exists (and says so); a missing file is created 0600 when
     * {@code create}. Returns whether the file exists now.
     */
    static boolean requireOwnFile(Path file, String what, boolean create) throws StoreException {
        PosixFileAttributes a = attributes(file, what);
        if (a == null) {
            if (!create) {
                return false;
            }
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(FILE_MODE));
            } catch (FileAlreadyExistsException raced) {
                // checked below
            } catch (IOException e) {
                throw new StoreException("cannot create the " + what + " " + file + ": " + e.getMessage(), e);
            }
            a = attributes(file, what);
            if (a == null) {
                throw new StoreException("the " + what + " " + file + " vanished as it was created");
            }
        }
        if (a.isSymbolicLink() || !a.isRegularFile()) {
            throw new StoreException("refused the " + what + " " + file + ": it is " + (a.isSymbolicLink()
                    ? "a symbolic link" : "not a regular file"));
        }
        requireOwnerAndMode(file, a, what, false);
        return true;
    }

    private static PosixFileAttributes attributes(Path p, String what) throws StoreException {
        try {
            return Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException e) {
            throw new StoreException("refused the " + what + " " + p + ": this platform has no POSIX file attributes, "
                    + "and the host store checks owner and mode (not supported here yet)", e);
        } catch (IOException e) {
            throw new StoreException("cannot read the " + what + " " + p + ": " + e.getMessage(), e);
        }
    }

    private static void requireOwnerAndMode(Path p, PosixFileAttributes a, String what, boolean dir)
            throws StoreException {
        String me = System.getProperty("user.name");
        // The owner's numeric uid, compared with this process's (root ignores modes: this is our check).
        Object uid;
        try {
            uid = Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new StoreException("cannot read the owner of the " + what + " " + p + ": " + e.getMessage(), e);
        }
        long mine = spice.authority.host.Users.ownUid();
        if (!(uid instanceof Integer u) || u.longValue() != mine) {
            throw new StoreException("refused the " + what + " " + p + ": it is owned by uid " + uid + ", not by this user ("
                    + me + ", uid " + mine + ")");
        }
        Set<PosixFilePermission> perms = a.permissions();
        for (PosixFilePermission bad : new PosixFilePermission[] {PosixFilePermission.GROUP_READ,
                PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
                PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE}) {
            if (perms.contains(bad)) {
                throw new StoreException("refused the " + what + " " + p + ": its mode is "
                        + PosixFilePermissions.toString(perms) + "; it must give no access to group or others ("
                        + (dir ? "0700" : "0600") + ")");
            }
        }
    }

    /**
     * Points sqlite-jdbc's native library at a private directory of this user before its first
     * use: {@code $XDG_RUNTIME_DIR/spice-authority/sqlite-native} when that is set, else
     * {@code ~/.cache/spice-authority/sqlite-native}, 0700 and checked; never a shared /tmp path
     * another user could prepare. A directory already set in {@code org.sqlite.tmpdir} must pass
     * the same checks.
     */
    static synchronized void privateNativeDirectory() throws StoreException {
        String set = System.getProperty("org.sqlite.tmpdir");
        Path dir;
        if (set != null && !set.isEmpty()) {
            dir = Path.of(set);
        } else {
            String runtime = System.getenv("XDG_RUNTIME_DIR");
            Path base = runtime != null && !runtime.isEmpty() && Path.of(runtime).isAbsolute()
                    && Files.isDirectory(Path.of(runtime), LinkOption.NOFOLLOW_LINKS) ? Path.of(runtime)
                    : Path.of(System.getProperty("user.home"), ".cache");
            dir = base.resolve("spice-authority").resolve("sqlite-native");
        }
        privateDirectory(dir.toAbsolutePath());
        System.setProperty("org.sqlite.tmpdir", dir.toAbsolutePath().toString());
    }
}
