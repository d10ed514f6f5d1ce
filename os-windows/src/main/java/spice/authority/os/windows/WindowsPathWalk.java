package spice.authority.os.windows;

import static spice.authority.os.DirectoryRefusedException.Category.IDENTITY;
import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.DirectoryRefusedException.Category.MISSING;
import static spice.authority.os.DirectoryRefusedException.Category.PERMS;
import static spice.authority.os.DirectoryRefusedException.Category.TYPE;

import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;

/**
 * The walk from the volume root to the authority directory (wire-format d.8, issue 14), shared by
 * binding and {@link WindowsSecureDirectory#revalidate()}.
 *
 * <p>The volume root is the one object opened by name (the drive-letter mapping is the trusted
 * volume namespace). Every component below it is opened with {@code NtCreateFile} relative to its
 * parent's handle ({@code RootDirectory}) with {@code OBJ_DONT_REPARSE} and
 * {@code FILE_OPEN_REPARSE_POINT}, so no reparse point is ever followed and no string path is
 * resolved twice. Each component is judged before anything below it is opened or created: a
 * directory, not a reparse point, its final path the expected one, its owner and DACL accepted by
 * {@link DaclPolicy} (the leaf by the leaf rule). A refusal of an existing component creates nothing.
 * Every call goes through the {@link WindowsCalls} the directory was given.
 */
final class WindowsPathWalk {

    static final int DIR_ACCESS = AccessRights.READ_CONTROL | AccessRights.FILE_READ_ATTRIBUTES
            | AccessRights.FILE_TRAVERSE | AccessRights.SYNCHRONIZE;
    static final int SHARE_ALL = Win32.FILE_SHARE_READ | Win32.FILE_SHARE_WRITE | Win32.FILE_SHARE_DELETE;
    static final int DIR_OPTIONS = Win32.FILE_DIRECTORY_FILE | Win32.FILE_SYNCHRONOUS_IO_NONALERT
            | Win32.FILE_OPEN_REPARSE_POINT;

    /** A bound directory: the open handle (owned by the caller), its identity and whether the leaf was created. */
    record Bound(long handle, FileIdentity identity, boolean createdLeaf) {}

    private final WindowsCalls calls;
    private final WindowsPath path;
    private final DaclPolicy policy;

    WindowsPathWalk(WindowsCalls calls, WindowsPath path, DaclPolicy policy) {
        this.calls = calls;
        this.path = path;
        this.policy = policy;
    }

    WindowsPath path() {
        return path;
    }

    /**
     * Walks the path. With {@code create}, missing components are created with the user-only
     * descriptor ({@link SecurityDescriptor#userOnly}); otherwise a missing component is
     * {@code MISSING}.
     *
     * @return the bound leaf; the caller owns its handle
     */
    Bound walk(boolean create) throws DirectoryRefusedException {
        String rootShown = path.prefix(0);
        int type = calls.getDriveType(path.volumeRoot());
        if (type != Win32.DRIVE_FIXED && type != Win32.DRIVE_REMOVABLE && type != Win32.DRIVE_RAMDISK) {
            throw new DirectoryRefusedException(TYPE, rootShown,
                    "drive type " + type + ": not a fixed, removable or RAM disk (network drives are not accepted)");
        }
        long h;
        try {
            h = calls.openVolumeRoot(path.volumeRoot());
        } catch (WindowsException e) {
            throw io(rootShown, e);
        }
        boolean ok = false;
        try {
            checkDirectory(h, rootShown, 0, false);
            boolean created = false;
            int n = path.components().size();
            for (int i = 0; i < n; i++) {
                String name = path.components().get(i);
                String shown = path.prefix(i + 1);
                boolean leaf = i == n - 1;
                created = false;
                WindowsCalls.Created child;
                try {
                    child = calls.ntCreateFile(h, name, DIR_ACCESS, SHARE_ALL, Win32.FILE_OPEN, DIR_OPTIONS, null);
                } catch (WindowsException e) {
                    if (!create || !notFound(e)) {
                        throw classify(shown, e);
                    }
                    try {
                        child = calls.ntCreateFile(h, name, DIR_ACCESS, SHARE_ALL, Win32.FILE_CREATE, DIR_OPTIONS,
                                SecurityDescriptor.userOnly(policy.user()));
                        created = child.created();
                    } catch (WindowsException c) {
                        if (c.status() != Win32.STATUS_OBJECT_NAME_COLLISION) {
                            throw classify(shown, c);
                        }
                        // RACE: someone created it first: validate it like any existing component.
                        try {
                            child = calls.ntCreateFile(h, name, DIR_ACCESS, SHARE_ALL, Win32.FILE_OPEN, DIR_OPTIONS, null);
                        } catch (WindowsException again) {
                            throw classify(shown, again);
                        }
                    }
                }
                long parent = h;
                h = child.handle();
                calls.closeHandle(parent);
                // SECURITY: judged before anything below it is opened or created.
                checkDirectory(h, shown, i + 1, leaf);
            }
            FileIdentity identity;
            try {
                identity = FileIds.identity(calls.fileIdInfo(h));
            } catch (RuleViolation v) {
                throw v.refusal(path.prefix(n));
            } catch (WindowsException e) {
                throw io(path.prefix(n), e);
            }
            ok = true;
            return new Bound(h, identity, created);
        } finally {
            if (!ok) {
                calls.closeHandle(h);
            }
        }
    }

    /** A directory, not a reparse point, at the expected final path, with an accepted owner and DACL. */
    private void checkDirectory(long h, String shown, int depth, boolean leaf) throws DirectoryRefusedException {
        try {
            WindowsCalls.AttributeTag tag = calls.attributeTag(h);
            if (tag.isReparsePoint()) {
                throw new RuleViolation(DaclRule.REPARSE,
                        String.format("is a reparse point (tag 0x%08X)", tag.reparseTag())).refusal(shown);
            }
            if (!tag.isDirectory()) {
                throw new DirectoryRefusedException(TYPE, shown, "is not a directory");
            }
            // SECURITY: the handle-relative walk already pins every step; the final path proves that
            // no hard-linked or remapped object stands in for the expected one (wire-format d.8).
            String finalPath = calls.finalPath(h);
            if (!path.finalPathMatches(finalPath, depth)) {
                throw new DirectoryRefusedException(IDENTITY, shown, "its final path is " + finalPath);
            }
            SecurityDescriptor sd = DaclPolicy.parse(calls.securityInfo(h));
            if (leaf) {
                policy.checkLeaf(sd);
            } else {
                policy.checkAncestor(sd);
            }
        } catch (RuleViolation v) {
            throw v.refusal(shown);
        } catch (WindowsException e) {
            throw io(shown, e);
        }
    }

    static boolean notFound(WindowsException e) {
        return e.status() == Win32.STATUS_OBJECT_NAME_NOT_FOUND || e.status() == Win32.STATUS_OBJECT_PATH_NOT_FOUND;
    }

    /** Turns a failed open or create of a component into a refusal. */
    static DirectoryRefusedException classify(String shown, WindowsException e) {
        int s = e.status();
        if (notFound(e)) {
            return new DirectoryRefusedException(MISSING, shown, "does not exist");
        }
        if (s == Win32.STATUS_REPARSE_POINT_ENCOUNTERED || s == Win32.STATUS_STOPPED_ON_SYMLINK) {
            return new RuleViolation(DaclRule.REPARSE, "is a reparse point (" + e.getMessage() + ")").refusal(shown);
        }
        if (s == Win32.STATUS_NOT_A_DIRECTORY) {
            return new DirectoryRefusedException(TYPE, shown, "is not a directory");
        }
        if (s == Win32.STATUS_FILE_IS_A_DIRECTORY) {
            return new DirectoryRefusedException(TYPE, shown, "is a directory, not a file");
        }
        if (s == Win32.STATUS_ACCESS_DENIED || e.error() == Win32.ERROR_ACCESS_DENIED) {
            return new DirectoryRefusedException(PERMS, shown, "access denied (" + e.getMessage() + ")");
        }
        return io(shown, e);
    }

    static DirectoryRefusedException io(String shown, WindowsException e) {
        return new DirectoryRefusedException(IO, shown, e.getMessage());
    }
}
