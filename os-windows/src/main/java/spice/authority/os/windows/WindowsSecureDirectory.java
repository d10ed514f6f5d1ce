package spice.authority.os.windows;

import static spice.authority.os.DirectoryRefusedException.Category.BUSY;
import static spice.authority.os.DirectoryRefusedException.Category.IDENTITY;
import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.DirectoryRefusedException.Category.LINKS;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.NAME;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.SIZE;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;
import static spice.authority.os.windows.WindowsPathWalk.SHARE_ALL;
import static spice.authority.os.windows.WindowsPathWalk.classify;
import static spice.authority.os.windows.WindowsPathWalk.io;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import spice.authority.os.BoundedRead;
import spice.authority.os.CloseGate;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.FileNames;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * The Windows {@link SecureDirectory}: a retained directory handle and {@code NtCreateFile} calls
 * relative to it (wire-format d.7 and d.8), all made through the {@link WindowsCalls} it was
 * opened with ({@link WindowsCalls#jna()} in production).
 *
 * <p>The file rule on Windows: not a reparse point, not a directory, exactly one link, a nonzero
 * 64-bit file id, owned by the current user with a protected DACL of explicit allow entries for
 * trusted principals only ({@link DaclPolicy#checkLeaf}). New files get the user-only descriptor.
 *
 * <p>NOT RUN: every method here reaches Windows through {@link WindowsCalls}; on Linux only the
 * rules it applies are tested (README.md).
 */
final class WindowsSecureDirectory implements SecureDirectory {

    private static final int READ_CHUNK = 64 * 1024;
    private static final int DIRECTORY_CHUNK = 64 * 1024;
    private static final int FILE_OPTIONS = Win32.FILE_NON_DIRECTORY_FILE | Win32.FILE_SYNCHRONOUS_IO_NONALERT
            | Win32.FILE_OPEN_REPARSE_POINT;
    private static final int QUERY_ACCESS = AccessRights.READ_CONTROL | AccessRights.FILE_READ_ATTRIBUTES
            | AccessRights.SYNCHRONIZE;
    /** wire-format d.8: files are shared for read and write, never for delete. */
    private static final int FILE_SHARE = Win32.FILE_SHARE_READ | Win32.FILE_SHARE_WRITE;
    private static final int LOCK_ATTEMPTS = 3;

    private final WindowsCalls calls;
    private final WindowsPathWalk walk;
    private final DaclPolicy policy;
    private final long dir;
    private final FileIdentity identity;
    private final boolean createdLeaf;
    private final OpenMode openMode;
    private final CloseGate gate = new CloseGate();

    private WindowsSecureDirectory(WindowsCalls calls, WindowsPathWalk walk, DaclPolicy policy,
                                   WindowsPathWalk.Bound bound, OpenMode openMode) {
        this.calls = calls;
        this.walk = walk;
        this.policy = policy;
        this.dir = bound.handle();
        this.identity = bound.identity();
        this.createdLeaf = bound.createdLeaf();
        this.openMode = openMode;
    }

    /** Binds {@code path} for the user {@code user}; every call goes through {@code calls}. */
    static WindowsSecureDirectory open(String path, OpenMode mode, WindowsCalls calls, Sid user)
            throws DirectoryRefusedException {
        WindowsPath parsed = WindowsPath.parse(path);
        DaclPolicy policy = new DaclPolicy(user);
        WindowsPathWalk walk = new WindowsPathWalk(calls, parsed, policy);
        WindowsPathWalk.Bound bound = walk.walk(mode == OpenMode.CREATE_OR_VALIDATE);
        return new WindowsSecureDirectory(calls, walk, policy, bound, mode);
    }

    @Override
    public String path() {
        return walk.path().path();
    }

    @Override
    public FileIdentity identity() {
        return identity;
    }

    @Override
    public boolean createdLeaf() {
        return createdLeaf;
    }

    @Override
    public OpenMode openMode() {
        return openMode;
    }

    @Override
    public void revalidate() throws DirectoryRefusedException {
        enter();
        try {
            WindowsPathWalk.Bound now = walk.walk(false);
            calls.closeHandle(now.handle());
            // SECURITY: the path must still lead to the handle every operation uses.
            if (!now.identity().equals(identity)) {
                throw new DirectoryRefusedException(IDENTITY, shownPath(),
                        "now leads to " + now.identity() + ", not the bound directory " + identity);
            }
        } finally {
            exit();
        }
    }

    /** Opens {@code name} relative to the directory handle; MISSING when absent. */
    private WindowsCalls.Created openFile(String name, int access, int share, int disposition, String shown)
            throws DirectoryRefusedException {
        try {
            return calls.ntCreateFile(dir, name, access, share, disposition, FILE_OPTIONS,
                    disposition == Win32.FILE_OPEN ? null : SecurityDescriptor.userOnly(policy.user()));
        } catch (WindowsException e) {
            throw classify(shown, e);
        }
    }

    /** The file rule; returns the file's identity. */
    private FileIdentity requireSafeFile(long h, String shown) throws DirectoryRefusedException {
        try {
            WindowsCalls.AttributeTag tag = calls.attributeTag(h);
            if (tag.isReparsePoint()) {
                throw new RuleViolation(DaclRule.REPARSE,
                        String.format("is a reparse point (tag 0x%08X)", tag.reparseTag())).refusal(shown);
            }
            WindowsCalls.StandardInfo st = calls.standardInfo(h);
            if (st.directory() || tag.isDirectory()) {
                throw new DirectoryRefusedException(TYPE, shown, "is a directory, not a file");
            }
            if (st.deletePending()) {
                throw new DirectoryRefusedException(MISSING, shown, "is being deleted");
            }
            if (st.numberOfLinks() != 1) {
                throw new DirectoryRefusedException(LINKS, shown, "has " + st.numberOfLinks() + " hard links, not 1");
            }
            policy.checkLeaf(DaclPolicy.parse(calls.securityInfo(h)));
            return FileIds.identity(calls.fileIdInfo(h));
        } catch (RuleViolation v) {
            throw v.refusal(shown);
        } catch (WindowsException e) {
            throw io(shown, e);
        }
    }

    @Override
    public FileIdentity checkFile(String name) throws DirectoryRefusedException {
        FileNames.requireValid(shownPath(), name);
        String shown = shown(name);
        enter();
        try {
            long h = openFile(name, QUERY_ACCESS, SHARE_ALL, Win32.FILE_OPEN, shown).handle();
            try {
                return requireSafeFile(h, shown);
            } finally {
                calls.closeHandle(h);
            }
        } finally {
            exit();
        }
    }

    @Override
    public byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
        FileNames.requireValid(shownPath(), name);
        if (maxBytes < 0 || maxBytes == Integer.MAX_VALUE) {
            throw new IllegalArgumentException("maxBytes out of range: " + maxBytes);
        }
        String shown = shown(name);
        enter();
        try {
            // SHARE_ALL: a reader must not make a concurrent writer's rename over this name fail.
            long h = openFile(name, QUERY_ACCESS | AccessRights.FILE_READ_DATA, SHARE_ALL, Win32.FILE_OPEN, shown)
                    .handle();
            try {
                requireSafeFile(h, shown);
                long size;
                try {
                    size = calls.standardInfo(h).endOfFile();
                } catch (WindowsException e) {
                    throw io(shown, e);
                }
                if (size > maxBytes) {
                    throw tooLarge(shown, maxBytes);
                }
                try {
                    return BoundedRead.readAll((buf, off, len) -> calls.read(h, buf, off, len), size, maxBytes, READ_CHUNK,
                            () -> tooLarge(shown, maxBytes));
                } catch (WindowsException e) {
                    throw io(shown, e);
                }
            } finally {
                calls.closeHandle(h);
            }
        } finally {
            exit();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Windows (wire-format d.8, without the reference's bug): the temporary file is created with
     * {@code FILE_CREATE}, written, flushed, renamed onto the target by handle and flushed again.
     * Before the rename a failure deletes the temporary file by its handle. From the rename on
     * nothing is ever deleted by handle (the handle may name the new target by then): only the
     * temporary <em>name</em> is removed, which is a no-op once the rename took effect.
     */
    @Override
    public void writeAtomically(String name, byte[] data) throws DirectoryRefusedException {
        try {
            FileNames.requireValid(shownPath(), name);
        } catch (DirectoryRefusedException e) {
            throw e.asNothingWritten();
        }
        String shown = shown(name);
        if (FileNames.isLockName(name)) {
            throw new DirectoryRefusedException(NAME, shown, "lock files are never written or replaced", true);
        }
        if (openMode == OpenMode.VALIDATE_ONLY) {
            throw new IllegalStateException("directory opened for validation only: " + shownPath());
        }
        enter(); // before the copy: a closed directory refuses with nothing to wipe
        byte[] content = null;
        try {
            content = data.clone();
            // The destination, if present, must itself pass the file rule.
            // RACE: it may change before the rename; only trusted principals can do that.
            try {
                long t = openFile(name, QUERY_ACCESS, SHARE_ALL, Win32.FILE_OPEN, shown).handle();
                try {
                    requireSafeFile(t, shown);
                } finally {
                    calls.closeHandle(t);
                }
            } catch (DirectoryRefusedException e) {
                if (e.category() != MISSING) {
                    throw e.asNothingWritten();
                }
            }
            String temp = FileNames.temporaryName(name, FileNames.temporaryNonce());
            long h;
            try {
                // FILE_GENERIC_WRITE's specific rights (FlushFileBuffers asks for write access) and DELETE (the rename).
                h = calls.ntCreateFile(dir, temp, QUERY_ACCESS | AccessRights.FILE_WRITE_DATA | AccessRights.FILE_APPEND_DATA
                                | AccessRights.FILE_WRITE_ATTRIBUTES | AccessRights.FILE_WRITE_EA | AccessRights.DELETE,
                        FILE_SHARE, Win32.FILE_CREATE, FILE_OPTIONS, SecurityDescriptor.userOnly(policy.user())).handle();
            } catch (WindowsException e) {
                throw io(shown, e).asNothingWritten();
            }
            boolean renameCalled = false;
            try {
                for (int off = 0; off < content.length; ) {
                    int n = calls.write(h, content, off, content.length - off);
                    if (n <= 0) {
                        throw WindowsException.win32("WriteFile (no progress)", 0);
                    }
                    off += n;
                }
                calls.flush(h);
                renameCalled = true;
                calls.renameByHandle(h, dir, name);
                calls.flush(h); // d.8 step 5; there is no directory flush on Windows
            } catch (WindowsException e) {
                if (!renameCalled) {
                    String left = deleteQuietly(h) ? "" : "; the temporary file could not be removed";
                    throw new DirectoryRefusedException(IO, shown, e.getMessage() + left, true);
                }
                // SECURITY: never delete by handle from here: it may name the new target.
                removeByNameQuietly(temp);
                throw new DirectoryRefusedException(IO, shown, e.getMessage()
                        + "; the new content may be in place, and may not be durable");
            } catch (RuntimeException | Error e) {
                if (!renameCalled) {
                    deleteQuietly(h);
                }
                throw e;
            } finally {
                calls.closeHandle(h);
            }
        } finally {
            if (content != null) {
                Arrays.fill(content, (byte) 0); // SECURITY: the content may be the identity key
            }
            exit();
        }
    }

    private boolean deleteQuietly(long h) {
        try {
            calls.deleteByHandle(h);
            return true;
        } catch (WindowsException e) {
            return false;
        }
    }

    private void removeByNameQuietly(String temp) {
        try {
            long t = calls.ntCreateFile(dir, temp, QUERY_ACCESS | AccessRights.DELETE, SHARE_ALL, Win32.FILE_OPEN,
                    FILE_OPTIONS, null).handle();
            try {
                calls.deleteByHandle(t);
            } finally {
                calls.closeHandle(t);
            }
        } catch (WindowsException ignored) {
            // absent (the rename took effect) or not removable: a temporary name is never read
        }
    }

    @Override
    public List<String> list() throws DirectoryRefusedException {
        String shown = shownPath();
        enter();
        try {
            long h;
            try {
                // SECURITY: an empty name relative to the retained handle reopens the retained
                // directory, whatever its path names now; the new handle has its own enumeration state.
                h = calls.ntCreateFile(dir, "", AccessRights.FILE_LIST_DIRECTORY | AccessRights.SYNCHRONIZE, SHARE_ALL,
                        Win32.FILE_OPEN, Win32.FILE_DIRECTORY_FILE | Win32.FILE_SYNCHRONOUS_IO_NONALERT, null).handle();
            } catch (WindowsException e) {
                throw io(shown, e);
            }
            try {
                List<String> names = new ArrayList<>();
                byte[] buf = new byte[DIRECTORY_CHUNK];
                boolean restart = true;
                while (true) {
                    int n = calls.readDirectory(h, buf, restart);
                    restart = false;
                    if (n == 0) {
                        break;
                    }
                    DirectoryEntries.decode(buf, n, names);
                }
                names.sort(null);
                return List.copyOf(names);
            } catch (WindowsException e) {
                throw io(shown, e); // SECURITY: never a partial list
            } catch (IllegalArgumentException e) {
                throw new DirectoryRefusedException(IO, shown, "unreadable directory listing: " + e.getMessage());
            } finally {
                calls.closeHandle(h);
            }
        } finally {
            exit();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code NtCreateFile(FILE_CREATE)} of a fresh temporary name relative to the retained
     * handle, {@code FlushFileBuffers}, then deletion by that handle.
     */
    @Override
    public void probeWrite(String target) throws DirectoryRefusedException {
        FileNames.requireValid(shownPath(), target);
        if (FileNames.isLockName(target)) {
            throw new DirectoryRefusedException(NAME, shown(target), "lock files are never written or replaced");
        }
        if (openMode == OpenMode.VALIDATE_ONLY) {
            throw new IllegalStateException("directory opened for validation only: " + shownPath());
        }
        String temp = FileNames.temporaryName(target, FileNames.temporaryNonce());
        enter();
        try {
            long h;
            try {
                // FlushFileBuffers asks for write access; DELETE for the removal by handle.
                h = calls.ntCreateFile(dir, temp, QUERY_ACCESS | AccessRights.FILE_WRITE_DATA | AccessRights.FILE_APPEND_DATA
                                | AccessRights.FILE_WRITE_ATTRIBUTES | AccessRights.FILE_WRITE_EA | AccessRights.DELETE,
                        FILE_SHARE, Win32.FILE_CREATE, FILE_OPTIONS, SecurityDescriptor.userOnly(policy.user())).handle();
            } catch (WindowsException e) {
                throw new DirectoryRefusedException(IO, shownPath(), "a write probe failed: " + e.getMessage());
            }
            try {
                calls.flush(h);
                calls.deleteByHandle(h);
            } catch (WindowsException e) {
                String left = deleteQuietly(h) ? "" : "; its empty temporary file could not be removed";
                throw new DirectoryRefusedException(IO, shownPath(), "a write probe failed: " + e.getMessage() + left);
            } catch (RuntimeException | Error e) {
                deleteQuietly(h);
                throw e;
            } finally {
                calls.closeHandle(h);
            }
        } finally {
            exit();
        }
    }

    @Override
    public boolean removeTemporary(String name) throws DirectoryRefusedException {
        if (FileNames.temporaryTarget(name).isEmpty()) {
            throw new DirectoryRefusedException(NAME, shownPath() + "\\" + FileNames.printable(name),
                    "not a temporary file name (." + "<name>.<24 hex>.tmp)");
        }
        if (openMode == OpenMode.VALIDATE_ONLY) {
            throw new IllegalStateException("directory opened for validation only: " + shownPath());
        }
        String shown = shown(name);
        enter();
        try {
            long h;
            try {
                h = calls.ntCreateFile(dir, name, QUERY_ACCESS | AccessRights.DELETE, SHARE_ALL, Win32.FILE_OPEN,
                        FILE_OPTIONS, null).handle();
            } catch (WindowsException e) {
                if (WindowsPathWalk.notFound(e)) {
                    return false;
                }
                throw classify(shown, e);
            }
            try {
                WindowsCalls.AttributeTag tag = calls.attributeTag(h);
                if (tag.isReparsePoint()) {
                    throw new RuleViolation(DaclRule.REPARSE, "is a reparse point").refusal(shown);
                }
                if (tag.isDirectory()) {
                    throw new DirectoryRefusedException(TYPE, shown, "is a directory, not a file");
                }
                // SECURITY: only what a writer of ours leaves: a file owned by the current user.
                SecurityDescriptor sd = DaclPolicy.parse(calls.securityInfo(h));
                if (sd.owner() == null || !sd.owner().equals(policy.user())) {
                    throw new DirectoryRefusedException(OWNER, shown, "owned by " + sd.owner() + ", not the current user");
                }
                calls.deleteByHandle(h);
                return true;
            } catch (RuleViolation v) {
                throw v.refusal(shown);
            } catch (WindowsException e) {
                throw io(shown, e);
            } finally {
                calls.closeHandle(h);
            }
        } finally {
            exit();
        }
    }

    @Override
    public StableLock lock(String name, LockMode mode) throws DirectoryRefusedException {
        FileNames.requireValid(shownPath(), name);
        String shown = shown(name);
        if (!FileNames.isLockName(name)) {
            throw new DirectoryRefusedException(NAME, shown, "lock file names end in " + FileNames.LOCK_SUFFIX);
        }
        int access = QUERY_ACCESS | AccessRights.FILE_READ_DATA | AccessRights.FILE_WRITE_DATA;
        long h = 0;
        boolean ok = false;
        try {
            enter();
            try {
                if (openMode == OpenMode.VALIDATE_ONLY) {
                    try {
                        h = openFile(name, access, FILE_SHARE, Win32.FILE_OPEN, shown).handle();
                    } catch (DirectoryRefusedException e) {
                        if (e.category() == MISSING) {
                            throw new IllegalStateException("directory opened for validation only; lock file "
                                    + shown + " does not exist");
                        }
                        throw e;
                    }
                } else {
                    for (int attempt = 1; h == 0; attempt++) {
                        try {
                            h = calls.ntCreateFile(dir, name, access, FILE_SHARE, Win32.FILE_CREATE, FILE_OPTIONS,
                                    SecurityDescriptor.userOnly(policy.user())).handle();
                        } catch (WindowsException e) {
                            if (e.status() != Win32.STATUS_OBJECT_NAME_COLLISION) {
                                throw classify(shown, e);
                            }
                            try {
                                h = calls.ntCreateFile(dir, name, access, FILE_SHARE, Win32.FILE_OPEN, FILE_OPTIONS, null)
                                        .handle();
                            } catch (WindowsException o) {
                                // RACE: removed between the two calls (only by a trusted principal): try again
                                if (!WindowsPathWalk.notFound(o) || attempt == LOCK_ATTEMPTS) {
                                    throw classify(shown, o);
                                }
                            }
                        }
                    }
                }
            } finally {
                exit();
            }
            FileIdentity id = requireSafeFile(h, shown);
            // RACE: none on the name: the handle does not share delete, so while it is open the lock
            // file cannot be renamed or deleted; the lock is on the file the name names.
            boolean got;
            try {
                // The directory lock is not held here: a blocking wait must not delay close().
                got = calls.lockFileEx(h, mode == LockMode.NON_BLOCKING);
            } catch (WindowsException e) {
                throw io(shown, e);
            }
            if (!got) {
                throw new DirectoryRefusedException(BUSY, shown, "locked by another holder");
            }
            ok = true;
            return new WindowsStableLock(calls, name, h, id);
        } finally {
            if (!ok && h != 0) {
                calls.closeHandle(h);
            }
        }
    }

    @Override
    public void close() {
        gate.close(() -> calls.closeHandle(dir));
    }

    private void enter() {
        gate.enter(this::shownPath);
    }

    private void exit() {
        gate.exit();
    }

    private static DirectoryRefusedException tooLarge(String shown, int maxBytes) {
        return new DirectoryRefusedException(SIZE, shown, "larger than the limit of " + maxBytes + " bytes");
    }

    String shownPath() {
        return FileNames.printable(walk.path().path());
    }

    private String shown(String name) {
        return shownPath() + "\\" + name;
    }

    @Override
    public String toString() {
        return "WindowsSecureDirectory[" + shownPath() + ", " + identity + (gate.isClosed() ? ", closed" : "") + "]";
    }
}
