package spice.authority.os.posix;

import static spice.authority.os.DirectoryRefusedException.Category.BUSY;
import static spice.authority.os.DirectoryRefusedException.Category.IDENTITY;
import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.DirectoryRefusedException.Category.LINKS;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.MODE;
import static spice.authority.os.DirectoryRefusedException.Category.NAME;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.PERMS;
import static spice.authority.os.DirectoryRefusedException.Category.SIZE;
import static spice.authority.os.DirectoryRefusedException.Category.SYMLINK;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;
import static spice.authority.os.posix.PathWalk.io;
import static spice.authority.os.posix.PathWalk.octal;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
 * The POSIX {@link SecureDirectory}: a retained directory descriptor and {@code *at()} calls
 * relative to it (wire-format d.4, d.5 and d.7), all made through the {@link Syscalls} it was
 * opened with ({@link Syscalls#LIBC} in production).
 */
final class PosixSecureDirectory implements SecureDirectory {

    static final int FILE_MODE = 0600;
    private static final int READ_CHUNK = 64 * 1024;
    /** The errnos of a rename refused before it changed anything ({@link #renameRefused}). */
    private static final Set<Integer> RENAME_REFUSALS = Stream.of("ENOSPC", "EDQUOT")
            .map(Libc.P::errnoValue).collect(Collectors.toUnmodifiableSet());
    /**
     * Linux {@code f_type} of the local file systems whose rename reserves its space and checks
     * quota before it changes a directory: ext2/3/4, XFS, Btrfs, tmpfs, F2FS. Not NFS, SMB or
     * FUSE: their clients may move the target aside first (NFS's silly rename, SMB's
     * unlink-and-retry) or carry a rename out and still answer an error. (A 9p mount reports the
     * type its server gives, so a VM's share of a host ext4 passes as ext4; the target and
     * temporary-name checks of {@link #renameRefused} still hold there.)
     */
    private static final Set<Long> LOCAL_FILE_SYSTEMS = Set.of(0xEF53L, 0x58465342L, 0x9123683EL, 0x01021994L, 0xF2F52010L);

    private final PosixPlatform p = Libc.P;
    private final Syscalls sys;
    private final PathWalk walk;
    private final long euid;
    private final int dirfd;
    private final FileIdentity identity;
    private final boolean createdLeaf;
    private final OpenMode openMode;
    private final CloseGate gate = new CloseGate();
    /** The directory flush after a rename, shared by concurrent writers (group commit). */
    private final DirectoryFlush directoryFlush;
    /** getdents64 (Linux) or fdopendir/readdir_r (macOS), over {@link #sys}. */
    private final DirectoryListing listing;
    /** Whether the directory is on a {@link #LOCAL_FILE_SYSTEMS local file system} (read at open). */
    private final boolean localFileSystem;
    /** The ancestors' descriptors of the last walk that led here, for {@link #revalidate}; null once closed. */
    private final AtomicReference<PathWalk.Chain> chain;

    private PosixSecureDirectory(Syscalls sys, PathWalk walk, long euid, PathWalk.Bound bound, OpenMode openMode) {
        this.sys = sys;
        this.walk = walk;
        this.euid = euid;
        this.dirfd = bound.fd();
        this.identity = bound.stat().identity();
        this.createdLeaf = bound.createdLeaf();
        this.openMode = openMode;
        this.directoryFlush = new DirectoryFlush(sys, dirfd);
        this.listing = new DirectoryListing(sys, p);
        this.localFileSystem = isLocalFileSystem(sys, dirfd);
        this.chain = new AtomicReference<>(bound.chain());
    }

    /** Whether {@code fd} is on a known local Linux file system; anything unknown is not. */
    private static boolean isLocalFileSystem(Syscalls sys, int fd) {
        try {
            return LOCAL_FILE_SYSTEMS.contains(sys.filesystemType(fd));
        } catch (PosixException | RuntimeException e) {
            return false; // macOS, or fstatfs failed: every failed rename stays uncertain
        }
    }

    /**
     * Binds {@code path}; every call of the returned directory, its walks and its locks goes
     * through {@code sys}.
     */
    static PosixSecureDirectory open(String path, OpenMode mode, Syscalls sys) throws DirectoryRefusedException {
        long euid = sys.geteuid();
        PathWalk walk = PathWalk.of(sys, path, euid);
        PathWalk.Bound bound = walk.walk(mode == OpenMode.CREATE_OR_VALIDATE);
        try {
            return new PosixSecureDirectory(sys, walk, euid, bound, mode);
        } catch (RuntimeException | Error e) {
            bound.closeQuietly(sys); // the descriptors are ours until a directory holds them
            throw e;
        }
    }

    @Override
    public String path() {
        return walk.path();
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

    /**
     * {@inheritDoc}
     *
     * <p>First through the ancestors' descriptors kept from the last walk ({@link
     * PathWalk#stillLeadsTo}: one {@code statx} per component, where the kernel reports mount
     * IDs); when anything there differs, by a full walk from {@code /}, which decides and names
     * the refusal. A chain is replaced only by a walk that led to this directory; after a
     * refusal the old one stays (and keeps its directories alive) until the path is restored.
     */
    @Override
    public void revalidate() throws DirectoryRefusedException {
        enter();
        try {
            // A failed flush is final (DirectoryFlush): refuse every later transition before it
            // writes anything, and say so to readiness, instead of fencing each run in turn.
            int lost = directoryFlush.failedErrno();
            if (lost != 0) {
                throw new DirectoryRefusedException(IO, shownPath(), "an fsync of this directory failed ("
                        + p.errnoName(lost) + "): no write here can be proven durable until the directory is opened "
                        + "again (restart the helper)");
            }
            PathWalk.Chain known = chain.get();
            if (known != null && known.acquire()) {
                try {
                    if (walk.stillLeadsTo(known)) {
                        return;
                    }
                } finally {
                    known.release();
                }
            }
            // Something differs (or a call failed, or no chain is kept): the full walk decides, and reports.
            PathWalk.Bound now = walk.walk(false);
            PathWalk.Chain fresh = now.chain();
            boolean installed = false;
            try {
                sys.closeQuietly(now.fd());
                FileIdentity walked = now.stat().identity();
                // SECURITY: the path must still lead to the descriptor every operation uses.
                if (!walked.equals(identity)) {
                    throw new DirectoryRefusedException(IDENTITY, shownPath(),
                            "now leads to " + walked + ", not the bound directory " + identity);
                }
                // The proof goes through the ancestors just walked from now on (they differ when the
                // directory was moved into a new one and the path leads to it again).
                PathWalk.Chain old = chain.getAndSet(fresh);
                installed = true;
                if (old != null) {
                    old.retire();
                }
            } finally {
                if (!installed && fresh != null) {
                    fresh.retire();
                }
            }
        } finally {
            exit();
        }
    }

    /**
     * The entry {@code name} itself, or null when it does not exist. SECURITY: AT_SYMLINK_NOFOLLOW:
     * a symbolic link is judged itself, never the file it points to; nothing is opened, so a FIFO
     * cannot block.
     */
    private FileStat statNoFollow(String name, String shown) throws DirectoryRefusedException {
        try {
            return sys.fstatat(dirfd, name, p.AT_SYMLINK_NOFOLLOW);
        } catch (PosixException e) {
            if (e.errno() == p.ENOENT) {
                return null;
            }
            throw io(shown, e);
        }
    }

    @Override
    public FileIdentity checkFile(String name) throws DirectoryRefusedException {
        FileNames.requireValid(shownPath(), name);
        String shown = shown(name);
        enter();
        try {
            FileStat st = statNoFollow(name, shown);
            if (st == null) {
                throw new DirectoryRefusedException(MISSING, shown, "does not exist");
            }
            requireSafeFile(st, shown);
            return st.identity();
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
            int fd = openFile(name, p.O_RDONLY, 0, shown);
            try {
                FileStat st = fstat(fd, shown);
                requireSafeFile(st, shown);
                if (st.size() > maxBytes) {
                    throw tooLarge(shown, maxBytes);
                }
                return readBounded(fd, st.size(), maxBytes, shown);
            } finally {
                sys.closeQuietly(fd);
            }
        } finally {
            exit();
        }
    }

    private byte[] readBounded(int fd, long expected, int maxBytes, String shown) throws DirectoryRefusedException {
        try {
            return BoundedRead.readAll((buf, off, len) -> sys.read(fd, buf, off, len), expected, maxBytes, READ_CHUNK,
                    () -> tooLarge(shown, maxBytes));
        } catch (PosixException e) {
            throw io(shown, e);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Every refusal thrown before {@code renameat} is called carries
     * {@link DirectoryRefusedException#nothingWritten()}; from the call of {@code renameat} on,
     * none does, except a rename the kernel refused before it changed anything
     * ({@link #renameRefused}). The temporary file is unlinked on every path that did not rename it.
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
            // d.4 step 1: the destination, if present, must itself pass the file rules.
            // RACE: it may change before the rename below (say, gain a hard link, so its old content
            // lives on under the other name); only the directory's owner can do that, and the
            // rename replaces the name whatever it names then.
            FileStat target; // null: no file under the name
            try {
                target = statNoFollow(name, shown);
                if (target != null) {
                    requireSafeFile(target, shown);
                }
            } catch (DirectoryRefusedException e) {
                throw e.asNothingWritten();
            }
            String temp = FileNames.temporaryName(name, FileNames.temporaryNonce());
            int fd = -1;
            boolean tempExists = false; // as far as we know: created, and neither renamed nor removed
            boolean renameCalled = false;
            FileStat written = null;
            try {
                fd = sys.openat(dirfd, temp,
                        p.O_WRONLY | p.O_CREAT | p.O_EXCL | p.O_NOFOLLOW | p.O_CLOEXEC, FILE_MODE);
                tempExists = true;
                // SECURITY: the file is ours (O_EXCL); fix its mode so the umask cannot matter.
                sys.fchmod(fd, FILE_MODE);
                for (int off = 0; off < content.length; ) {
                    int n = sys.write(fd, content, off, content.length - off);
                    if (n <= 0) {
                        throw new PosixException(p.errnoValue("EIO"), "write (no progress)");
                    }
                    off += n;
                }
                sys.fsync(fd);
                written = sys.fstat(fd);
                int toClose = fd;
                fd = -1;
                sys.close(toClose);
                // From the call of renameat on, the outcome is unknown to the caller: the rename may
                // take effect even when it reports an error, and the directory flush decides
                // whether it is durable.
                renameCalled = true;
                sys.renameat(dirfd, temp, dirfd, name);
                tempExists = false;
                // One fsync of the directory may serve concurrent writers (group commit): it returns
                // only after a flush that started after this rename returned has completed.
                directoryFlush.flush();
            } catch (PosixException e) {
                if (renameCalled && tempExists && renameRefused(e, temp, written, name, target)) {
                    // renameat itself failed (tempExists: it never returned), the target is as it
                    // was, and the temporary file is gone by our own unlink: as if the rename had
                    // never been called.
                    tempExists = false;
                    renameCalled = false;
                }
                // After a failed rename the temporary name is unlinked as well: if the rename took
                // effect after all, the name no longer exists (ENOENT), and the new content, now
                // under the target name, is not touched.
                boolean removed = !tempExists || removeQuietly(temp);
                tempExists = false;
                String left = removed ? "" : "; the temporary file could not be removed";
                if (renameCalled) {
                    throw new DirectoryRefusedException(IO, shown, e.getMessage()
                            + "; the new content may be in place, and may not be durable" + left);
                }
                throw new DirectoryRefusedException(IO, shown, e.getMessage() + left, true);
            } finally {
                if (fd >= 0) {
                    sys.closeQuietly(fd);
                }
                if (tempExists) {
                    removeQuietly(temp); // a RuntimeException or Error: the caller will treat it as uncertain
                }
            }
        } finally {
            if (content != null) {
                Arrays.fill(content, (byte) 0); // SECURITY: the content may be the identity key
            }
            exit();
        }
    }

    /**
     * Whether a failed {@code renameat} provably left the target name as it was, in which case the
     * temporary file has been unlinked. POSIX: a rename that fails for any reason other than EIO
     * leaves the new name unaffected; file systems do not all keep to it, so all of these must hold:
     * <ul>
     *   <li>the directory is on a {@link #LOCAL_FILE_SYSTEMS local file system} (Linux), where a
     *       rename reserves its space and checks quota first;</li>
     *   <li>the errno is one of those checks: ENOSPC, EDQUOT (EIO, EINTR, EROFS, anything else
     *       stays uncertain; after EROFS our own unlink would fail anyway);</li>
     *   <li>the target name names what it named before the write (the same device and inode), or
     *       still nothing, and the temporary name still names the file written;</li>
     *   <li>our own unlink of the temporary name succeeds (not ENOENT): the name was ours to the
     *       end, so no rename of it can still be under way.</li>
     * </ul>
     */
    private boolean renameRefused(PosixException e, String temp, FileStat written, String name, FileStat target) {
        if (!localFileSystem || written == null || !RENAME_REFUSALS.contains(e.errno())) {
            return false;
        }
        try {
            FileStat tempNow = statNoFollow(temp, shown(temp));
            if (tempNow == null || !tempNow.identity().equals(written.identity())
                    || !Objects.equals(identityOf(target), identityOf(statNoFollow(name, shown(name))))) {
                return false;
            }
            sys.unlinkat(dirfd, temp, 0);
            return true;
        } catch (PosixException | DirectoryRefusedException again) {
            return false;
        }
    }

    /** The identity of {@code st}, null for no file. */
    private static FileIdentity identityOf(FileStat st) {
        return st == null ? null : st.identity();
    }

    /**
     * Unlinks a temporary file this directory created, relative to the descriptor.
     *
     * @return whether the name is gone (removed now or already)
     */
    private boolean removeQuietly(String temp) {
        try {
            sys.unlinkat(dirfd, temp, 0);
            return true;
        } catch (PosixException e) {
            return e.errno() == p.ENOENT;
        }
    }

    @Override
    public List<String> list() throws DirectoryRefusedException {
        String shown = shownPath();
        enter();
        try {
            return listing.list(dirfd, shown);
        } finally {
            exit();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code openat(O_CREAT|O_EXCL|O_NOFOLLOW)} of a fresh temporary name, {@code fsync},
     * {@code close}, {@code unlinkat}, all relative to the retained descriptor. The kernel answers
     * each of them from the file system itself, not from its caches: after an ext4 shutdown the
     * open fails (EIO); after the kernel's emergency read-only remount or a read-only remount, the
     * open fails (EROFS); on a device that fails writes, the {@code fsync} does (EIO), as it must
     * commit the file's creation. The name is random (96 bits) and created exclusively, so the
     * probe never touches a file it did not create.
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
            int fd = -1;
            boolean tempExists = false; // as far as we know: created and not removed
            try {
                fd = sys.openat(dirfd, temp, p.O_WRONLY | p.O_CREAT | p.O_EXCL | p.O_NOFOLLOW | p.O_CLOEXEC, FILE_MODE);
                tempExists = true;
                sys.fsync(fd);
                int toClose = fd;
                fd = -1;
                sys.close(toClose);
                try {
                    sys.unlinkat(dirfd, temp, 0);
                } catch (PosixException e) {
                    // RACE: a sweep of leftover temporaries (another process opening this
                    // directory, under identity.lock) may have removed it first: gone is gone.
                    if (e.errno() != p.ENOENT) {
                        throw e;
                    }
                }
                tempExists = false;
            } catch (PosixException e) {
                boolean removed = !tempExists || removeQuietly(temp);
                tempExists = false;
                throw new DirectoryRefusedException(IO, shownPath(), "a write probe failed: " + e.getMessage()
                        + (removed ? "" : "; its empty temporary file could not be removed"));
            } finally {
                if (fd >= 0) {
                    sys.closeQuietly(fd);
                }
                if (tempExists) {
                    removeQuietly(temp); // a RuntimeException or Error: leave no file behind
                }
            }
        } finally {
            exit();
        }
    }

    @Override
    public boolean removeTemporary(String name) throws DirectoryRefusedException {
        if (FileNames.temporaryTarget(name).isEmpty()) {
            throw new DirectoryRefusedException(NAME, shownPath() + "/" + FileNames.printable(name),
                    "not a temporary file name (." + "<name>.<24 hex>.tmp)");
        }
        if (openMode == OpenMode.VALIDATE_ONLY) {
            throw new IllegalStateException("directory opened for validation only: " + shownPath());
        }
        String shown = shown(name);
        enter();
        try {
            FileStat st = statNoFollow(name, shown);
            if (st == null) {
                return false;
            }
            // SECURITY: only what a writer of ours (or of the reference) leaves: a regular file of
            // the effective user. Its mode and link count are not judged: a crash may come before
            // the fchmod, and unlinking one name of a file never touches its content elsewhere.
            if (st.isSymlink()) {
                throw new DirectoryRefusedException(SYMLINK, shown, "is a symbolic link");
            }
            if (!st.isRegular()) {
                throw new DirectoryRefusedException(TYPE, shown, "is " + st.typeName() + ", not a regular file");
            }
            if (st.uid() != euid) {
                throw new DirectoryRefusedException(OWNER, shown,
                        "owned by uid " + st.uid() + ", not the effective user " + euid);
            }
            // RACE: the name may be replaced between the fstatat and the unlinkat; only the
            // directory's owner can do that, and unlinkat removes a name, never following it.
            try {
                sys.unlinkat(dirfd, name, 0);
                return true;
            } catch (PosixException e) {
                if (e.errno() == p.ENOENT) {
                    return false;
                }
                throw io(shown, e);
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
        for (int attempt = 1; ; attempt++) {
            StableLock l = lockOnce(name, mode, shown);
            if (l != null) {
                return l;
            }
            if (attempt == LOCK_ATTEMPTS) {
                throw new DirectoryRefusedException(IO, shown, "the lock file was replaced while it was being locked ("
                        + LOCK_ATTEMPTS + " times)");
            }
        }
    }

    private static final int LOCK_ATTEMPTS = 3;

    /** One attempt: the lock, or null when the name no longer names the file just locked. */
    private StableLock lockOnce(String name, LockMode mode, String shown) throws DirectoryRefusedException {
        int fd = -1;
        boolean created = false;
        boolean ok = false;
        try {
            enter();
            try {
                if (openMode == OpenMode.VALIDATE_ONLY) {
                    try {
                        fd = openFile(name, p.O_RDWR, 0, shown);
                    } catch (DirectoryRefusedException e) {
                        if (e.category() == MISSING) {
                            throw new IllegalStateException("directory opened for validation only; lock file "
                                    + shown + " does not exist");
                        }
                        throw e;
                    }
                } else {
                    try {
                        fd = sys.openat(dirfd, name,
                                p.O_RDWR | p.O_CREAT | p.O_EXCL | p.O_NOFOLLOW | p.O_NONBLOCK | p.O_CLOEXEC, FILE_MODE);
                        created = true;
                    } catch (PosixException e) {
                        if (e.errno() != p.EEXIST) {
                            throw classifyFileError(name, shown, e);
                        }
                        fd = openFile(name, p.O_RDWR, 0, shown);
                    }
                }
            } finally {
                exit();
            }
            if (created) {
                try {
                    // SECURITY: the file is ours (O_EXCL); fix its mode so the umask cannot matter.
                    sys.fchmod(fd, FILE_MODE);
                } catch (PosixException e) {
                    throw io(shown, e);
                }
            }
            FileStat st = fstat(fd, shown);
            requireSafeFile(st, shown);
            try {
                // The directory lock is not held here: a blocking wait must not delay close().
                sys.flock(fd, p.LOCK_EX | (mode == LockMode.NON_BLOCKING ? p.LOCK_NB : 0));
            } catch (PosixException e) {
                if (e.errno() == p.EWOULDBLOCK || e.errno() == p.EAGAIN) {
                    throw new DirectoryRefusedException(BUSY, shown, "locked by another holder");
                }
                throw io(shown, e);
            }
            // RACE: between the open and the flock the name may have been unlinked or replaced
            // (only by the directory's owner: lock files are never unlinked or renamed here). A lock
            // on a file the name no longer names would exclude nobody: check, and let the caller
            // try again on the file the name names now.
            if (!stillNames(name, st.identity(), shown)) {
                return null;
            }
            // Built before ok is set: an Error while building it must still close (and so unlock) fd.
            PosixStableLock lock = new PosixStableLock(sys, name, fd, st.identity());
            ok = true;
            return lock;
        } finally {
            if (!ok && fd >= 0) {
                sys.closeQuietly(fd);
            }
        }
    }

    private boolean stillNames(String name, FileIdentity locked, String shown) throws DirectoryRefusedException {
        enter();
        try {
            return sys.fstatat(dirfd, name, p.AT_SYMLINK_NOFOLLOW).identity().equals(locked);
        } catch (PosixException e) {
            if (e.errno() == p.ENOENT) {
                return false;
            }
            throw io(shown, e);
        } finally {
            exit();
        }
    }

    @Override
    public void close() {
        gate.close(() -> {
            try {
                sys.closeQuietly(dirfd);
            } finally {
                PathWalk.Chain last = chain.getAndSet(null);
                if (last != null) {
                    last.retire();
                }
            }
        });
    }

    private void enter() {
        gate.enter(this::shownPath);
    }

    private void exit() {
        gate.exit();
    }

    /**
     * Opens a file relative to the directory with {@code O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC}
     * (a FIFO must not block the helper) and maps a failure to a refusal.
     */
    private int openFile(String name, int accessFlags, int mode, String shown) throws DirectoryRefusedException {
        try {
            return sys.openat(dirfd, name, accessFlags | p.O_NOFOLLOW | p.O_NONBLOCK | p.O_CLOEXEC, mode);
        } catch (PosixException e) {
            throw classifyFileError(name, shown, e);
        }
    }

    private DirectoryRefusedException classifyFileError(String name, String shown, PosixException e) {
        if (e.errno() == p.ENOENT) {
            return new DirectoryRefusedException(MISSING, shown, "does not exist");
        }
        // ELOOP (symbolic link), EISDIR (directory), ENXIO or EOPNOTSUPP (socket), EACCES (mode):
        // name the rule the object breaks.
        // RACE: the name may change between the failed open and this fstatat; that only changes
        // which refusal is reported, never whether one is.
        try {
            requireSafeFile(sys.fstatat(dirfd, name, p.AT_SYMLINK_NOFOLLOW), shown);
        } catch (DirectoryRefusedException specific) {
            return specific;
        } catch (PosixException ignored) {
            // report the original failure
        }
        if (e.errno() == p.EACCES || e.errno() == p.EPERM) {
            return new DirectoryRefusedException(PERMS, shown, "access denied (" + e.getMessage() + ")");
        }
        return io(shown, e);
    }

    /** wire-format d.5: a regular file owned by the effective user, one link, mode exactly 0600. */
    private void requireSafeFile(FileStat st, String shown) throws DirectoryRefusedException {
        if (st.isSymlink()) {
            throw new DirectoryRefusedException(SYMLINK, shown, "is a symbolic link");
        }
        if (!st.isRegular()) {
            throw new DirectoryRefusedException(TYPE, shown, "is " + st.typeName() + ", not a regular file");
        }
        if (st.uid() != euid) {
            throw new DirectoryRefusedException(OWNER, shown,
                    "owned by uid " + st.uid() + ", not the effective user " + euid);
        }
        if (st.nlink() != 1) {
            throw new DirectoryRefusedException(LINKS, shown, "has " + st.nlink() + " hard links, not 1");
        }
        if (st.permissions() != FILE_MODE) {
            throw new DirectoryRefusedException(MODE, shown,
                    "mode " + octal(st.permissions()) + ", must be exactly 0600");
        }
    }

    private FileStat fstat(int fd, String shown) throws DirectoryRefusedException {
        try {
            return sys.fstat(fd);
        } catch (PosixException e) {
            throw io(shown, e);
        }
    }

    private static DirectoryRefusedException tooLarge(String shown, int maxBytes) {
        return new DirectoryRefusedException(SIZE, shown, "larger than the limit of " + maxBytes + " bytes");
    }

    String shownPath() {
        return FileNames.printable(walk.path());
    }

    private String shown(String name) {
        return shownPath() + "/" + name;
    }

    @Override
    public String toString() {
        return "PosixSecureDirectory[" + shownPath() + ", " + identity + (gate.isClosed() ? ", closed" : "") + "]";
    }
}
