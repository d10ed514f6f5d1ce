package spice.authority.os;

import java.util.List;

/**
 * An owned, validated authority directory. All file operations are relative to a
 * descriptor (POSIX) or handle (Windows) retained from the moment the directory was
 * bound; no string path is resolved again except by {@link #revalidate()}.
 *
 * <p><b>Guarantees.</b>
 * <ul>
 *   <li>At bind time the configured path was absolute and clean, was walked one component
 *       at a time without following any symbolic link, every ancestor was owned by root or
 *       the effective user and was not writable by others unless sticky (and then the next
 *       component was owned by root or the effective user), and the leaf is a directory
 *       owned by the effective user with mode exactly {@code 0700}.</li>
 *   <li>Renaming or replacing the path after binding cannot redirect any operation: reads,
 *       writes and locks act on the retained directory. {@link #revalidate()} proves that
 *       the path still leads to it, for callers about to make a durable transition.</li>
 *   <li>Every file read, replaced, locked or checked ({@link #checkFile}) is judged by one
 *       file rule: a regular file owned by the effective user, with exactly one link and mode
 *       exactly {@code 0600}; a symbolic link, FIFO, socket or directory in its place is
 *       refused without blocking.</li>
 *   <li>{@link #writeAtomically} leaves either the old or the new content under the target
 *       name, never a mix, and says which side of its rename a failure came from: a refusal
 *       with {@link DirectoryRefusedException#nothingWritten()} means the target was never
 *       changed (the rename was never called, or was provably refused: see
 *       {@link #writeAtomically}), so the old content is in place and the write may simply be
 *       retried; any other failure is uncertain. It removes its temporary file on every failure before the
 *       rename; one left by a crash (or by a removal that failed too) keeps the reserved
 *       temporary name ({@link FileNames#temporaryTarget}), is never read, and is removed with
 *       {@link #removeTemporary}.</li>
 *   <li>{@link #list} reads the retained directory, never a path, and fails rather than return
 *       a partial list.</li>
 *   <li>{@link #probeWrite} creates, flushes and removes only a fresh temporary file of its own:
 *       no named file changes, whether it succeeds or fails.</li>
 *   <li>Every failure is a {@link DirectoryRefusedException}; no descriptor leaks on any
 *       path. Implementations are safe for concurrent use by several threads; {@link #close()}
 *       waits for operations in flight.</li>
 * </ul>
 *
 * <p>File names follow {@link FileNames}. Implementations live in the OS modules; tests may
 * wrap an instance (see {@link ForwardingSecureDirectory}) to inject faults.
 */
public interface SecureDirectory extends AutoCloseable {

    /** The configured path exactly as it was bound. */
    String path();

    /** The identity of the retained directory. */
    FileIdentity identity();

    /** Whether binding created the leaf directory (as opposed to validating an existing one). */
    boolean createdLeaf();

    /** The mode the directory was bound with. */
    OpenMode openMode();

    /**
     * Walks the configured path again from the root, re-checks the ancestry rules and the
     * leaf's owner and mode, and proves that the walked directory is the retained one
     * (same identity). Writes nothing. Cheap enough to run before every durable transition.
     *
     * @throws DirectoryRefusedException if the path is missing, leads elsewhere
     *     ({@link DirectoryRefusedException.Category#IDENTITY}), or an ancestor or the leaf is no
     *     longer trusted; the directory stays usable and a later call succeeds once the path
     *     is restored
     */
    void revalidate() throws DirectoryRefusedException;

    /**
     * Checks a file in place, without opening or reading it: its status, taken relative to the
     * retained directory without following a symbolic link, must pass the same file rule as
     * {@link #read}, {@link #writeAtomically} and {@link #lock}. Writes nothing. Cheap enough to
     * run before every durable transition.
     *
     * @param name a file name (see {@link FileNames})
     * @return the identity of the file the name names now, so that a caller can prove later that
     *     it is still the same file
     * @throws DirectoryRefusedException {@link DirectoryRefusedException.Category#MISSING} when
     *     absent, or the file rule it breaks
     */
    FileIdentity checkFile(String name) throws DirectoryRefusedException;

    /**
     * Reads a whole file.
     *
     * @param name a file name (see {@link FileNames})
     * @param maxBytes the largest accepted size; a larger file is refused with
     *     {@link DirectoryRefusedException.Category#SIZE}
     * @return the content
     * @throws DirectoryRefusedException {@link DirectoryRefusedException.Category#MISSING} when
     *     absent, or the file rule it breaks
     */
    byte[] read(String name, int maxBytes) throws DirectoryRefusedException;

    /**
     * Durably replaces (or creates) a file: destination check, a fresh temporary file
     * ({@link FileNames#temporaryName}) created exclusively with mode {@code 0600}, write, flush
     * to disk, rename over the target, flush the directory (wire-format d.4). Lock files cannot
     * be written.
     *
     * <p><b>Which side of the rename.</b> This is a guarantee every implementation keeps, and
     * callers build their answers on it:
     * <ul>
     *   <li>A {@link DirectoryRefusedException} whose {@link DirectoryRefusedException#nothingWritten()}
     *       is true comes from a write whose rename <em>did not happen</em>: it was thrown before
     *       the rename was called (a refused name or destination, or a failure to create, write,
     *       flush or close the temporary file: ENOSPC, EIO, ...), or after a rename the system
     *       provably refused before it changed anything. What counts as proof is the
     *       implementation's to say and must be strict: the POSIX directory accepts only ENOSPC
     *       and EDQUOT on a known local Linux file system, with the target and the temporary name
     *       unchanged and the temporary file then unlinked by itself. The target still names its old content (or nothing), and the
     *       temporary file has been removed; should that removal fail too, the file stays under
     *       its temporary name, which nothing reads. Retrying the same write is safe and works
     *       once the cause is gone.</li>
     *   <li>Every other failure may come from the rename itself or after it (the directory
     *       flush): a refusal with {@code nothingWritten()} false, and any
     *       {@link RuntimeException} or {@link Error}. The new content may be visible, durable or
     *       neither. Callers treat it as uncertain, as the transaction contract requires
     *       (wire-format e.6); what is on disk after a restart is the truth.</li>
     * </ul>
     *
     * @param name a file name (see {@link FileNames}) not ending in {@code .lock}
     * @param data the complete new content
     * @throws DirectoryRefusedException if the target breaks a file rule or a call fails
     * @throws IllegalStateException if the directory was opened {@link OpenMode#VALIDATE_ONLY}
     */
    void writeAtomically(String name, byte[] data) throws DirectoryRefusedException;

    /**
     * Lists the names in the retained directory, read through its descriptor (never by path),
     * without {@code .} and {@code ..}, sorted. Every kind of entry is listed (files, links,
     * directories, temporaries); the names are not judged. A name that is not valid UTF-8 comes
     * back with U+FFFD in place of the bad bytes, so it is never a valid {@link FileNames} name.
     *
     * <p>RACE: entries created or removed while the listing runs may or may not appear; callers
     * read each entry afterwards and must expect it to be gone ({@code MISSING}).
     *
     * @return the names; complete, never a partial list
     * @throws DirectoryRefusedException {@link DirectoryRefusedException.Category#IO} when reading
     *     the directory fails at any point
     * @throws UnsupportedPlatformException where listing is not implemented
     */
    List<String> list() throws DirectoryRefusedException;

    /**
     * Proves that the directory takes a durable write now, without changing any file a reader
     * knows: creates a fresh temporary file of a write to {@code target}
     * ({@link FileNames#temporaryName}, exclusively, mode {@code 0600}), writes nothing into it,
     * flushes it to disk and removes it. Nothing is renamed, so {@code target} and every other
     * name keep what they name. A file system that answers reads and listings from its caches
     * while it refuses writes (shut down, remounted read-only by the kernel after an error, on a
     * device that fails writes) is refused here.
     *
     * <p>The file holds no content, so a probe costs the metadata of one create and one removal
     * (on ext4, measured: about 9 KiB of journal per probe). A probe file left by a crash keeps its
     * temporary name, which nothing reads, and is removed like any other temporary of
     * {@code target} ({@link #removeTemporary}).
     *
     * <p>RACE: whoever removes temporaries of {@code target} (the holder of the lock every writer
     * of it holds) may remove the probe's file before the probe does; the probe then succeeds all
     * the same.
     *
     * @param target a valid file name that is not a lock name (see {@link FileNames})
     * @throws DirectoryRefusedException {@link DirectoryRefusedException.Category#IO} with the
     *     failed call and its error (EROFS, EIO, ENOSPC, ...), or {@code NAME} for a lock or
     *     invalid name
     * @throws IllegalStateException if the directory was opened {@link OpenMode#VALIDATE_ONLY}
     */
    void probeWrite(String target) throws DirectoryRefusedException;

    /**
     * Removes a temporary file left behind by an interrupted {@link #writeAtomically} (a crash,
     * or a failed clean-up): only a name that {@link FileNames#temporaryTarget} accepts, and only
     * when it is a regular file owned by the effective user. Removes the name relative to the
     * retained descriptor and follows nothing.
     *
     * <p>RACE: a write in flight owns its temporary file, and removing it makes that write fail at
     * its rename (uncertain). The caller must know that no write to the target can be in flight,
     * in this process or another: for example by holding the lock every writer of the target
     * holds.
     *
     * @param name a temporary name
     * @return true when the file was removed, false when it did not exist
     * @throws DirectoryRefusedException {@link DirectoryRefusedException.Category#NAME} for any
     *     other name, the rule the entry breaks ({@code SYMLINK}, {@code TYPE}, {@code OWNER}),
     *     or {@code IO}
     * @throws IllegalStateException if the directory was opened {@link OpenMode#VALIDATE_ONLY}
     */
    boolean removeTemporary(String name) throws DirectoryRefusedException;

    /**
     * Opens (creating it with mode {@code 0600} if absent), validates and exclusively locks a
     * stable lock file. Lock files are never unlinked or replaced.
     *
     * @param name a file name (see {@link FileNames}) ending in {@code .lock}
     * @param mode wait for the lock, or fail at once with
     *     {@link DirectoryRefusedException.Category#BUSY}
     * @return the held lock; close it to release
     * @throws DirectoryRefusedException if the file breaks a file rule, is busy, or a call fails
     * @throws IllegalStateException if the directory was opened {@link OpenMode#VALIDATE_ONLY}
     *     and the lock file does not exist yet
     */
    StableLock lock(String name, LockMode mode) throws DirectoryRefusedException;

    /** Closes the retained descriptor. Idempotent; locks already taken stay valid until closed. */
    @Override
    void close();
}
