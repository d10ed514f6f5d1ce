package spice.authority.core;

import java.util.List;
import java.util.Optional;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileNames;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;
import spice.authority.os.UnsupportedPlatformException;

/**
 * The sweep of {@link RunAuthority#open}: removes the temporary files of interrupted writes of
 * {@code identity.key} and of records, and nothing else.
 *
 * <p><b>Guarantees.</b> Only names {@link FileNames#temporaryTarget} maps to {@code identity.key}
 * or to a record file are removed, descriptor-relatively; never one a writer may still be writing
 * (see {@link #removeRecordTemporary}). A failure is logged and leaves the file; it never stops
 * the open (nothing reads these files). A directory bound for validation only is left as it is.
 */
final class TempSweep {
    private static final System.Logger LOG = System.getLogger(RunAuthority.class.getName());

    private TempSweep() {}

    /**
     * Removes every temporary file of an interrupted write of {@code identity.key} or of a record
     * ({@code .identity.key.<24 hex>.tmp}, {@code .run-<64 hex>.state.<24 hex>.tmp}). Not lock
     * files, not state files, not near misses, not temporaries of other targets. Called under
     * {@code identity.lock}.
     *
     * @return how many files were removed
     */
    static int sweep(SecureDirectory dir) {
        if (dir.openMode() == OpenMode.VALIDATE_ONLY) {
            return 0;
        }
        List<String> names;
        try {
            names = dir.list();
        } catch (DirectoryRefusedException | UnsupportedPlatformException e) {
            LOG.log(System.Logger.Level.WARNING, "leftover temporary files not swept: {0}", e.getMessage());
            return 0;
        }
        int removed = 0;
        for (String name : names) {
            Optional<String> target = FileNames.temporaryTarget(name);
            if (target.isEmpty()) {
                continue;
            }
            try {
                if (target.get().equals(RecordStore.IDENTITY_KEY)) {
                    // RACE: identity.key is written only under identity.lock (here and in the
                    // reference), and the caller holds it: no write of it is in flight.
                    removed += dir.removeTemporary(name) ? 1 : 0;
                } else if (RecordStore.RECORD_FILE.matcher(target.get()).matches()) {
                    removed += removeRecordTemporary(dir, name, target.get()) ? 1 : 0;
                }
            } catch (DirectoryRefusedException e) {
                LOG.log(System.Logger.Level.WARNING, "leftover temporary file kept: {0}", e.getMessage());
            }
        }
        if (removed > 0) {
            LOG.log(System.Logger.Level.INFO, "removed {0} leftover temporary file(s) of interrupted writes in {1}",
                    removed, FileNames.printable(dir.path()));
        }
        return removed;
    }

    /**
     * Removes the temporary file of an interrupted write of record {@code target}, unless a
     * write of it may be in flight.
     *
     * <p>RACE: every writer of a record (this authority, another process sharing the directory,
     * the reference) holds the run's stable lock while it writes, and lock files are never
     * removed. So when the lock file does not exist no writer has ever held it and the temporary
     * is no write's in flight; when it exists, the temporary is removed only while we hold the
     * lock ourselves (non-blocking); a live owner ({@code busy}) keeps it.
     *
     * @return whether the file was removed
     */
    private static boolean removeRecordTemporary(SecureDirectory dir, String temp, String target)
            throws DirectoryRefusedException {
        String lockName = target.substring(0, target.length() - ".state".length()) + FileNames.LOCK_SUFFIX;
        try {
            dir.checkFile(lockName);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                return dir.removeTemporary(temp);
            }
            throw e;
        }
        StableLock lock;
        try {
            lock = dir.lock(lockName, LockMode.NON_BLOCKING);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.BUSY) {
                return false;
            }
            throw e;
        }
        try (lock) {
            return dir.removeTemporary(temp);
        }
    }
}
