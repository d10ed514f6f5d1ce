package spice.authority.os.posix;

import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.MODE;
import static spice.authority.os.DirectoryRefusedException.Category.NAME;
import static spice.authority.os.DirectoryRefusedException.Category.OWNER;
import static spice.authority.os.DirectoryRefusedException.Category.PERMS;
import static spice.authority.os.DirectoryRefusedException.Category.SYMLINK;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileNames;

/**
 * The walk from {@code /} to the authority directory (wire-format d.6 and ARCHITECTURE.md
 * "stricter" point 6), shared by binding and {@link PosixSecureDirectory#revalidate()}.
 *
 * <p>Each component is opened relative to its parent's descriptor with
 * {@code O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC}, so no symbolic link is ever followed and
 * no string path is resolved twice. The ancestry rule is checked on the way down, before a
 * component is opened or created, so a refusal of an existing component creates nothing.
 * Every call goes through the {@link Syscalls} the directory was given.
 */
final class PathWalk {

    static final int LEAF_MODE = 0700;
    private static final int MAX_PATH_BYTES = 1023;
    private static final int MAX_NAME_BYTES = 255;

    /**
     * A bound directory: the open descriptor (owned by the caller), its stat, whether the leaf was
     * created, and the {@link Chain} of its ancestors' descriptors (owned by the caller too).
     */
    record Bound(int fd, FileStat stat, boolean createdLeaf, Chain chain) {
        /** Closes the leaf's descriptor and gives up the chain (null when none was kept). */
        void closeQuietly(Syscalls sys) {
            try {
                sys.closeQuietly(fd);
            } finally {
                if (chain != null) {
                    chain.retire();
                }
            }
        }
    }

    /**
     * The descriptors of the leaf's ancestors, kept open from the walk that bound them, and what
     * {@code statx} said of each and of the leaf: element {@code i} is the directory holding
     * component {@code i} ({@code /} first); the last node is the leaf's. They let
     * {@link #stillLeadsTo} prove the path again with one {@code statx} per component instead of
     * an {@code openat}, an {@code fstat} and a {@code close}.
     *
     * <p>Every node carries the mount it was reached through as well as its device and inode:
     * a kept descriptor stays in the mount it was opened in, so a mount made over a component
     * later (a bind mount of a directory over itself keeps device and inode) would otherwise go
     * unseen. Kept only where the kernel reports mount IDs (Linux 5.8); elsewhere every proof is
     * a full walk.
     *
     * <p>Reference-counted, because a walk that finds the path changed installs a new chain
     * while other threads may still be reading the old one: the descriptors are closed once the
     * owner {@linkplain #retire retired} the chain and the last reader {@linkplain #release
     * released} it, never while a reader could pass one of them to the kernel (a closed number
     * may be reused for another file).
     */
    static final class Chain {
        private final Syscalls sys;
        private final int[] fds;
        private final Statx[] nodes;
        /** The owner's reference plus one per reader; 0 once closed. */
        private final AtomicInteger refs = new AtomicInteger(1);

        private Chain(Syscalls sys, int[] fds, Statx[] nodes) {
            this.sys = sys;
            this.fds = fds;
            this.nodes = nodes;
        }

        /**
         * A chain over {@code fds} (which it then owns) and the leaf {@code leafFd} (which it does
         * not), or null when {@code statx} cannot describe one of them with its mount: then the
         * caller still owns {@code fds}.
         */
        static Chain of(Syscalls sys, int emptyPath, int[] fds, int leafFd) {
            Statx[] nodes = new Statx[fds.length + 1];
            try {
                for (int i = 0; i <= fds.length; i++) {
                    nodes[i] = sys.statx(i < fds.length ? fds[i] : leafFd, "", emptyPath);
                    if (nodes[i].mountId() < 0) {
                        return null;
                    }
                }
            } catch (PosixException | UnsupportedOperationException e) {
                return null;
            }
            return new Chain(sys, fds, nodes);
        }

        /** Takes a reader's reference; false once the chain is closed. */
        boolean acquire() {
            while (true) {
                int n = refs.get();
                if (n == 0) {
                    return false;
                }
                if (refs.compareAndSet(n, n + 1)) {
                    return true;
                }
            }
        }

        /** Gives back a reader's reference (the last one closes every descriptor, whatever fails). */
        void release() {
            if (refs.decrementAndGet() == 0) {
                closeFrom(0);
            }
        }

        private void closeFrom(int i) {
            for (; i < fds.length; i++) {
                try {
                    sys.closeQuietly(fds[i]);
                } catch (RuntimeException | Error e) {
                    try {
                        closeFrom(i + 1);
                    } catch (RuntimeException | Error later) {
                        e.addSuppressed(later);
                    }
                    throw e;
                }
            }
        }

        /** The owner gives the chain up: closed now, or when its last reader releases it. */
        void retire() {
            release();
        }

        /** How many descriptors the chain holds (one per component above the leaf). */
        int size() {
            return fds.length;
        }
    }

    private final PosixPlatform p = Libc.P;
    private final Syscalls sys;
    private final String path;
    private final List<String> components;
    private final long euid;

    private final String leafShown;

    private PathWalk(Syscalls sys, String path, List<String> components, long euid) {
        this.sys = sys;
        this.path = path;
        this.components = components;
        this.euid = euid;
        this.leafShown = FileNames.printable(path);
    }

    /**
     * Checks that {@code path} is absolute and clean and splits it.
     *
     * @throws DirectoryRefusedException {@code NAME} naming the offending component
     */
    static PathWalk of(Syscalls sys, String path, long euid) throws DirectoryRefusedException {
        if (path == null || path.isEmpty()) {
            throw new DirectoryRefusedException(NAME, "<empty>", "the path is empty");
        }
        String shown = FileNames.printable(path);
        if (path.charAt(0) != '/') {
            throw new DirectoryRefusedException(NAME, shown, "not an absolute path");
        }
        if (path.indexOf('\0') >= 0) {
            throw new DirectoryRefusedException(NAME, shown, "contains a NUL character");
        }
        if (path.equals("/")) {
            throw new DirectoryRefusedException(NAME, shown, "the root directory cannot be the authority directory");
        }
        if (path.endsWith("/")) {
            throw new DirectoryRefusedException(NAME, shown, "trailing separator");
        }
        if (path.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            throw new DirectoryRefusedException(NAME, shown, "longer than " + MAX_PATH_BYTES + " bytes");
        }
        List<String> parts = new ArrayList<>();
        StringBuilder prefix = new StringBuilder();
        for (String c : path.substring(1).split("/", -1)) {
            prefix.append('/').append(c);
            if (c.isEmpty()) {
                throw new DirectoryRefusedException(NAME, FileNames.printable(prefix.toString()),
                        "empty component (repeated separator)");
            }
            if (c.equals(".") || c.equals("..")) {
                throw new DirectoryRefusedException(NAME, FileNames.printable(prefix.toString()),
                        "'" + c + "' components are not allowed");
            }
            if (c.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
                throw new DirectoryRefusedException(NAME, FileNames.printable(prefix.toString()),
                        "component longer than " + MAX_NAME_BYTES + " bytes");
            }
            parts.add(c);
        }
        return new PathWalk(sys, path, List.copyOf(parts), euid);
    }

    String path() {
        return path;
    }

    /** Root and the effective user are trusted owners; the user-namespace overflow uid never is. */
    boolean trusted(long uid) {
        return (uid == 0 || uid == euid) && uid != p.overflowUid;
    }

    /**
     * Walks the path. With {@code create}, missing components are created (mode {@code 0700},
     * then an explicit {@code fchmod(0700)} so that neither the umask nor a setgid parent
     * matters); otherwise a missing component is {@code MISSING}.
     *
     * @return the bound leaf; the caller owns its descriptor and its ancestors' {@link Chain}
     */
    Bound walk(boolean create) throws DirectoryRefusedException {
        int fd = -1;
        int[] ancestors = new int[components.size()];
        int held = 0;
        boolean ok = false;
        try {
            String parentShown = "/";
            try {
                fd = sys.openat(p.AT_FDCWD, "/", p.O_RDONLY | p.O_DIRECTORY | p.O_CLOEXEC, 0);
            } catch (PosixException e) {
                throw io("/", e);
            }
            FileStat st = stat(fd, "/");
            boolean created = false;
            StringBuilder prefix = new StringBuilder();
            for (int i = 0; i < components.size(); i++) {
                String name = components.get(i);
                prefix.append('/').append(name);
                String shown = FileNames.printable(prefix.toString());
                boolean leaf = i == components.size() - 1;

                // SECURITY: the parent must be trusted before anything below it is opened or created.
                boolean shared = checkParent(st, parentShown);

                created = false;
                boolean missing = false;
                int child;
                try {
                    child = sys.openat(fd, name, dirFlags(), 0);
                } catch (PosixException e) {
                    if (e.errno() != p.ENOENT || !create) {
                        throw classify(fd, name, shown, leaf, e);
                    }
                    missing = true;
                    try {
                        sys.mkdirat(fd, name, LEAF_MODE);
                        created = true;
                    } catch (PosixException m) {
                        if (m.errno() != p.EEXIST) { // RACE: someone else created it: validate it like any existing one
                            throw classify(fd, name, shown, leaf, m);
                        }
                    }
                    try {
                        child = sys.openat(fd, name, dirFlags(), 0);
                    } catch (PosixException e2) {
                        throw classify(fd, name, shown, leaf, e2);
                    }
                }
                // The parent goes to the kept ancestors, with nothing that allocates in between, so that
                // every descriptor has exactly one owner whatever is thrown.
                ancestors[held++] = fd;
                fd = child;
                if (missing || (create && leaf)) {
                    // The entry is durable in its parent before anything is written below it:
                    // otherwise a power loss after init (identity written, leaf flushed) can take
                    // the whole directory, and the next start would make a new scope and key. Also
                    // when another process created it (EEXIST) or an earlier attempt's flush failed
                    // (the leaf's parent is flushed on every open that may create: a clean
                    // directory's flush costs next to nothing).
                    try {
                        sys.fsync(ancestors[held - 1]);
                    } catch (PosixException e) {
                        throw io(parentShown, e);
                    }
                }

                st = stat(fd, shown);
                checkChild(st, shown, shared);
                if (created && st.uid() == euid) {
                    try {
                        sys.fchmod(fd, LEAF_MODE);
                    } catch (PosixException e) {
                        throw io(shown, e);
                    }
                    st = stat(fd, shown);
                }
                parentShown = shown;
            }
            checkLeaf(st);
            Chain chain = Chain.of(sys, p.AT_EMPTY_PATH, ancestors, fd);
            if (chain == null) {
                while (held > 0) {
                    sys.closeQuietly(ancestors[--held]); // uncounted before it is closed: never closed twice
                }
            }
            Bound bound = new Bound(fd, st, created, chain);
            ok = true;
            return bound;
        } finally {
            if (!ok) {
                if (fd >= 0) {
                    sys.closeQuietly(fd);
                }
                for (int i = 0; i < held; i++) {
                    sys.closeQuietly(ancestors[i]);
                }
            }
        }
    }

    /**
     * Proves the path again through {@code chain}: {@code /} is still the chain's first directory,
     * and each component is still, by name and without following a symbolic link, the next
     * directory of the chain and finally its leaf (same device, inode and mount), and the
     * ownership and permission rules of {@link #walk} hold for every pair. One {@code statx} per
     * component, nothing opened.
     *
     * <p>True only when everything holds. False when anything differs or a call fails: the caller
     * then walks the path afresh ({@link #walk}), whose verdict (and error) stands. The answer is
     * what the walk would have found, with one difference: a look-up by name needs only search
     * permission on the parent where the walk's open needs read permission too, so an ancestor
     * made unreadable (mode 0711, owner and rules unchanged) refuses the walk but not this proof.
     * Permission bits are not among the rules; ownership and write access are, and they hold.
     *
     * @param chain acquired by the caller for the duration of the call
     */
    boolean stillLeadsTo(Chain chain) {
        try {
            Statx at = sys.statx(p.AT_FDCWD, "/", 0);
            if (!at.sameFileAndMount(chain.nodes[0])) {
                return false; // another root (chroot, or a mount over it): let the walk decide
            }
            for (int i = 0; i < components.size(); i++) {
                boolean shared = checkParent(at.stat(), leafShown); // never shown: the walk reports
                // SECURITY: AT_SYMLINK_NOFOLLOW: a component replaced by a symbolic link is itself
                // judged (not a directory), never followed.
                at = sys.statx(chain.fds[i], components.get(i), p.AT_SYMLINK_NOFOLLOW);
                if (!at.stat().isDirectory() || !at.sameFileAndMount(chain.nodes[i + 1])) {
                    return false;
                }
                checkChild(at.stat(), leafShown, shared);
            }
            checkLeaf(at.stat());
            return true;
        } catch (PosixException | DirectoryRefusedException | UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * The rules on a directory before anything below it is opened or created: owned by a trusted
     * user, and not group- or world-writable unless sticky.
     *
     * @return whether the directory is shared (writable by others, sticky)
     */
    private boolean checkParent(FileStat st, String shown) throws DirectoryRefusedException {
        if (!trusted(st.uid())) {
            throw new DirectoryRefusedException(OWNER, shown,
                    "owned by uid " + st.uid() + ", neither root nor the effective user " + euid);
        }
        boolean shared = (st.permissions() & 022) != 0;
        if (shared && (st.permissions() & FileStat.S_ISVTX) == 0) {
            throw new DirectoryRefusedException(PERMS, shown,
                    "mode " + octal(st.permissions()) + ": group- or world-writable without the sticky bit");
        }
        return shared;
    }

    /** The rules on a component itself: a directory, and trusted when its parent is shared. */
    private void checkChild(FileStat st, String shown, boolean sharedParent) throws DirectoryRefusedException {
        if (!st.isDirectory()) {
            throw new DirectoryRefusedException(TYPE, shown, "is " + st.typeName() + ", not a directory");
        }
        // SECURITY: in a shared (sticky) parent anyone may have planted this component.
        if (sharedParent && !trusted(st.uid())) {
            throw new DirectoryRefusedException(OWNER, shown, "owned by uid " + st.uid()
                    + " inside a shared sticky directory; must be root or the effective user " + euid);
        }
    }

    /** The rules on the leaf: the effective user's, mode exactly 0700. */
    private void checkLeaf(FileStat st) throws DirectoryRefusedException {
        if (st.uid() != euid || !trusted(st.uid())) {
            throw new DirectoryRefusedException(OWNER, leafShown,
                    "owned by uid " + st.uid() + ", not the effective user " + euid);
        }
        if (st.permissions() != LEAF_MODE) {
            throw new DirectoryRefusedException(MODE, leafShown,
                    "mode " + octal(st.permissions()) + ", must be exactly 0700");
        }
    }

    private int dirFlags() {
        return p.O_RDONLY | p.O_DIRECTORY | p.O_NOFOLLOW | p.O_CLOEXEC;
    }

    /** Turns a failed open or mkdir of a directory component into a refusal. */
    private DirectoryRefusedException classify(int parentFd, String name, String shown, boolean leaf,
                                              PosixException e) {
        int errno = e.errno();
        if (errno == p.ENOENT) {
            return new DirectoryRefusedException(MISSING, shown, "does not exist");
        }
        if (errno == p.ENOTDIR || errno == p.ELOOP || errno == p.EEXIST) {
            // O_NOFOLLOW|O_DIRECTORY on a symbolic link fails with ENOTDIR on Linux, not ELOOP:
            // look at the component itself to name the right category.
            // RACE: the component may change between the failed open and this fstatat; that only
            // changes which refusal is reported, never whether one is.
            try {
                FileStat s = sys.fstatat(parentFd, name, p.AT_SYMLINK_NOFOLLOW);
                if (s.isSymlink()) {
                    return new DirectoryRefusedException(SYMLINK, shown, "is a symbolic link");
                }
                if (!s.isDirectory()) {
                    return new DirectoryRefusedException(TYPE, shown, "is " + s.typeName() + ", not a directory");
                }
                if (errno != p.EEXIST) {
                    return new DirectoryRefusedException(TYPE, shown,
                            "was not a directory when opened (" + e.getMessage() + "); it is changing concurrently");
                }
            } catch (PosixException ignored) {
                // fall through to the generic report of the original failure
            }
        }
        if (errno == p.EACCES || errno == p.EPERM) {
            // Not traversable by us: say whose it is when that alone breaks a rule.
            try {
                FileStat s = sys.fstatat(parentFd, name, p.AT_SYMLINK_NOFOLLOW);
                if (!trusted(s.uid()) || (leaf && s.uid() != euid)) {
                    return new DirectoryRefusedException(OWNER, shown, "owned by uid " + s.uid() + ", "
                            + (leaf ? "not the effective user " : "neither root nor the effective user ") + euid);
                }
            } catch (PosixException ignored) {
                // report the access failure itself
            }
            return new DirectoryRefusedException(PERMS, shown, "access denied (" + e.getMessage() + ")");
        }
        return io(shown, e);
    }

    private FileStat stat(int fd, String shown) throws DirectoryRefusedException {
        try {
            return sys.fstat(fd);
        } catch (PosixException e) {
            throw io(shown, e);
        }
    }

    static DirectoryRefusedException io(String shown, PosixException e) {
        return new DirectoryRefusedException(IO, shown, e.getMessage());
    }

    static String octal(int mode) {
        return String.format("%04o", mode);
    }
}
