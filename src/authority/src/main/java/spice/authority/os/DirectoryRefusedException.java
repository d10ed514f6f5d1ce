package spice.authority.os;

import java.util.Objects;

/**
 * A typed refusal to bind, validate or use the authority directory or a file in it.
 *
 * <p>The message is one line meant for the local user: the offending path component, the
 * category and why, for example
 * {@code /home/u/.local/state/spice-agent: PERMS (group- or world-writable without the sticky bit)}.
 * It never contains file contents. The low-level cause (an errno) is kept only in the
 * message detail, never as a chained cause.
 *
 * <p>A refusal of {@link SecureDirectory#writeAtomically} also says which side of the rename it
 * came from: {@link #nothingWritten()} is true only when the writer guarantees that the target
 * was never changed: it never called the rename, or the rename was provably refused before it
 * changed anything (see there).
 */
public final class DirectoryRefusedException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Why the directory or file was refused. */
    public enum Category {
        /** A symbolic link where a directory or file must be. */
        SYMLINK,
        /** Owned by someone other than root (ancestors) or the effective user. */
        OWNER,
        /** An ancestor grants group or other write without the sticky bit, or access was denied. */
        PERMS,
        /** The leaf directory's or a file's permission bits are not exactly what is required. */
        MODE,
        /** The object has the wrong type (not a directory, not a regular file: FIFO, socket, ...). */
        TYPE,
        /** The configured path no longer leads to the retained directory (moved or replaced). */
        IDENTITY,
        /** The path or file name is not acceptable (relative, unclean, bad characters). */
        NAME,
        /** A file has more than one hard link. */
        LINKS,
        /** A component or file does not exist (and was not to be created). */
        MISSING,
        /** An operating-system call failed for another reason (an errno such as EIO or ENOSPC). */
        IO,
        /** A file is larger than the bound its reader accepts. */
        SIZE,
        /** A non-blocking lock is held by someone else. */
        BUSY
    }

    private final Category category;
    private final String component;
    private final String detail;
    private final boolean nothingWritten;

    /**
     * @param category why
     * @param component the offending path component, as the user configured it (for files:
     *     the directory path, a separator and the file name)
     * @param detail a short human-readable reason; no secrets, no file contents
     */
    public DirectoryRefusedException(Category category, String component, String detail) {
        this(category, component, detail, false);
    }

    /**
     * @param category why
     * @param component the offending path component (see above)
     * @param detail a short human-readable reason; no secrets, no file contents
     * @param nothingWritten true only when the refusing write guarantees that the rename that would
     *     have made its new content visible did not happen: never called, or provably refused
     *     before it changed anything (see {@link #nothingWritten()})
     */
    public DirectoryRefusedException(Category category, String component, String detail, boolean nothingWritten) {
        super(format(category, component, detail), null, false, false);
        this.category = Objects.requireNonNull(category, "category");
        this.component = Objects.requireNonNull(component, "component");
        this.detail = Objects.requireNonNull(detail, "detail");
        this.nothingWritten = nothingWritten;
    }

    /** This refusal, marked as thrown by a write whose rename did not happen (see {@link #nothingWritten()}). */
    public DirectoryRefusedException asNothingWritten() {
        return nothingWritten ? this : new DirectoryRefusedException(category, component, detail, true);
    }

    private static String format(Category category, String component, String detail) {
        return component + ": " + category + " (" + detail + ")";
    }

    /** The category of the refusal. */
    public Category category() {
        return category;
    }

    /** The offending path component (or {@code directory/name} for a file). */
    public String component() {
        return component;
    }

    /** The short reason, without component and category. */
    public String detail() {
        return detail;
    }

    /**
     * Whether the refused {@link SecureDirectory#writeAtomically} failed before it called the
     * rename, or had its rename provably refused before it changed anything (a local file system
     * out of space or quota, see {@link SecureDirectory#writeAtomically}): the target still names
     * its old content (or nothing), so the write may be retried as it is once the cause is gone. False means "may have been written": the failure came at or
     * after the rename, or from an operation that makes no such statement. A caller must never
     * read false as "failed cleanly".
     */
    public boolean nothingWritten() {
        return nothingWritten;
    }
}
