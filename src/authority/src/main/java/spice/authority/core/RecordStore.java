package spice.authority.core;

import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.FileNames;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;
import spice.authority.os.UnsupportedPlatformException;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.HmacSha256;

/**
 * The record files of one bound {@link SecureDirectory} (wire-format.md d): reading and
 * verifying a run's record under this authority's record key, signing and writing one, the run
 * locks, and the identity proof every durable transition starts with.
 *
 * <p><b>Guarantees.</b> A record is returned only when its MAC verifies under the record key and
 * it names this scope, this key generation and the run asked for, under a valid {@link RunId}
 * (a wider ID is another implementation's, foreign). Every authenticity failure is the one
 * {@link AuthorityException.Verification}. {@link #revalidate()} reads no key and writes nothing.
 * The record key is destroyed by {@link #close()}, which also closes the directory. Leases are
 * the caller's: this class keeps no state but the directory and the key.
 */
final class RecordStore {
    static final String IDENTITY_KEY = AuthorityIdentity.FILE_NAME;
    /** A record file name as {@link RecordCodec#fileStem} makes them (wire-format d.1). */
    static final Pattern RECORD_FILE = Pattern.compile("run-[0-9a-f]{64}\\.state");

    private final SecureDirectory dir;
    private final String scopeIdHex;
    private final long keyGeneration;
    /** The file {@code identity.key} named when its key was read or created (device and inode). */
    private final FileIdentity identityFile;
    private final HmacSha256 recordMac;
    private final FormatPolicy formats;

    RecordStore(SecureDirectory dir, AuthorityIdentity identity, FileIdentity identityFile, FormatPolicy formats) {
        this.dir = dir;
        this.formats = formats;
        this.scopeIdHex = identity.scopeIdHex();
        this.keyGeneration = identity.generation();
        this.identityFile = identityFile;
        this.recordMac = new HmacSha256(identity.masterKey());
    }

    SecureDirectory directory() {
        return dir;
    }

    /** A record of this scope and key generation. */
    RunRecord newRecord(RunId id, long generation, RunPhase phase, RunRecord.SnapshotBinding binding) {
        return new RunRecord(scopeIdHex, keyGeneration, id.value(), generation, phase, binding);
    }

    /**
     * Identity proof before a durable transition (ARCHITECTURE.md "stricter" point 6): the path
     * still leads to the retained directory, and {@code identity.key} in it is still the file the
     * key was read from and still passes the file rule. Reads no key and writes nothing.
     */
    void revalidate() throws AuthorityException.Unavailable {
        try {
            dir.revalidate();
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("authority directory refused, nothing written: " + e.getMessage());
        } catch (IllegalStateException e) {
            throw new AuthorityException.Unavailable("authority directory closed");
        }
        try {
            // SECURITY: a loosened (mode, owner), hard-linked or replaced identity file refuses
            // every transition until it is restored, as `authority check` refuses the directory.
            checkIdentityFile(dir, identityFile);
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("identity file refused, nothing written: " + e.getMessage());
        } catch (IllegalStateException e) {
            throw new AuthorityException.Unavailable("authority directory closed");
        }
    }

    /**
     * Checks {@code identity.key} in place by the directory's one file rule and, when
     * {@code expected} is given, proves it the same file (device and inode). Reads nothing.
     *
     * @return the identity of the file the name names now
     * @throws DirectoryRefusedException the file rule it breaks, or
     *     {@link DirectoryRefusedException.Category#IDENTITY} when it is another file
     */
    static FileIdentity checkIdentityFile(SecureDirectory dir, FileIdentity expected) throws DirectoryRefusedException {
        FileIdentity now = dir.checkFile(IDENTITY_KEY);
        if (expected != null && !now.equals(expected)) {
            throw new DirectoryRefusedException(DirectoryRefusedException.Category.IDENTITY,
                    FileNames.printable(dir.path()) + "/" + IDENTITY_KEY,
                    "is file " + now + ", not " + expected + " that the authority key was read from");
        }
        return now;
    }

    /**
     * Whether the store can be used, for a readiness probe (see {@link RunAuthority#checkStore()}):
     * revalidates, reads the identity file (zeroed at once), lists, and probes a durable write.
     */
    void check() throws AuthorityException.Unavailable {
        revalidate();
        byte[] key = null;
        try {
            key = dir.read(IDENTITY_KEY, AuthorityIdentity.FILE_LENGTH);
        } catch (DirectoryRefusedException e) {
            throw new AuthorityException.Unavailable("identity file unreadable: " + e.getMessage());
        } finally {
            if (key != null) {
                Arrays.fill(key, (byte) 0); // SECURITY: read to prove the file reads, never kept
            }
        }
        try {
            dir.list();
        } catch (DirectoryRefusedException | UnsupportedPlatformException e) {
            throw new AuthorityException.Unavailable("authority directory cannot be listed: " + e.getMessage());
        }
        if (dir.openMode() != OpenMode.VALIDATE_ONLY) {
            try {
                // A temporary of identity.key, not of a record: it can never pass for a run's
                // write, and one a crash left is removed by the sweep under identity.lock.
                dir.probeWrite(IDENTITY_KEY);
            } catch (DirectoryRefusedException e) {
                throw new AuthorityException.Unavailable("authority directory takes no writes: " + e.getMessage());
            }
        }
    }

    /** The run's stable lock, non-blocking: {@code busy} while another owner holds it. */
    StableLock lockRun(RunId id) throws AuthorityException {
        try {
            return dir.lock(RecordCodec.fileStem(id.value()) + FileNames.LOCK_SUFFIX, LockMode.NON_BLOCKING);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.BUSY) {
                throw new AuthorityException.Busy("run " + id + " is owned by a live process");
            }
            throw new AuthorityException.Unavailable("run " + id + ": lock refused: " + e.getMessage());
        }
    }

    /**
     * Reads and verifies the record of {@code id}.
     *
     * @return empty when the state file is absent
     * @throws AuthorityException.Verification when present but unverifiable or foreign
     * @throws AuthorityException.UnsupportedFormat when its MAC verifies but its format is not accepted
     * @throws AuthorityException.Unavailable for any other read failure
     */
    Optional<RunRecord> readRecord(RunId id) throws AuthorityException {
        byte[] file;
        try {
            file = dir.read(stateFile(id), RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                return Optional.empty();
            }
            throw new AuthorityException.Unavailable("run " + id + ": record refused: " + e.getMessage());
        }
        return Optional.of(verifyRecord(file, id));
    }

    /**
     * The record's bytes for an import. A record that is absent or breaks the file rules is a
     * verification failure, as in the reference (wire-format Appendix C). Stricter than the
     * reference: a read the operating system failed ({@code IO}: EIO, EMFILE, ENFILE, ...) proves
     * nothing about the envelope; prepare has written nothing, so it is {@code unavailable} and the
     * same import may be tried again. (A replaced directory is refused before, by
     * {@link #revalidate()}, as {@code unavailable} too.)
     */
    byte[] readRecordBytesForImport(RunId id) throws AuthorityException.Verification, AuthorityException.Unavailable {
        try {
            return dir.read(stateFile(id), RecordCodec.MAX_FILE_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.IO) {
                throw new AuthorityException.Unavailable("reading the record of an import failed (" + e.category()
                        + "); nothing was written, the import may be tried again");
            }
            throw new AuthorityException.Verification();
        } catch (RuntimeException e) {
            throw new AuthorityException.Verification();
        }
    }

    /** The record in {@code file}, when its MAC verifies and it is ours and names {@code id}. */
    RunRecord verifyRecord(byte[] file, RunId id) throws AuthorityException {
        try {
            return requireOurs(verifyMac(file), id.value());
        } catch (Unreadable e) {
            throw e.toAuthority("run " + id);
        }
    }

    /**
     * The record in {@code file}, read under the directory entry {@code fileName}: it must name
     * the run whose hashed file name it sits under, so a renamed file cannot pose as another run.
     *
     * @throws Unreadable with the reason it is not a record of this authority
     */
    RunRecord verifyNamed(byte[] file, String fileName) throws Unreadable {
        RunRecord rec = verifyMac(file);
        if (!(RecordCodec.fileStem(rec.runId()) + ".state").equals(fileName)) {
            throw new Unreadable(UnreadableReason.MISNAMED, null);
        }
        return requireOurs(rec, rec.runId());
    }

    /**
     * The record of a file whose MAC verifies under this authority's record key, in a format the
     * policy accepts for verification (wire-format-v1alpha3.md section 7: a record is valid only
     * in an accepted format).
     */
    private RunRecord verifyMac(byte[] file) throws Unreadable {
        RunRecord rec;
        try {
            rec = RecordCodec.verifyFile(file, recordMac);
        } catch (RecordCodec.Unverifiable e) {
            throw new Unreadable(e.reason(), e.format());
        }
        if (rec.snapshot() != null && !formats.acceptsForVerification(rec.snapshot().format())) {
            throw new Unreadable(UnreadableReason.UNSUPPORTED_FORMAT, rec.snapshot().format().wire());
        }
        return rec;
    }

    /**
     * The record, when it belongs to this scope and key generation, names {@code runId}, and its
     * run ID is a {@link RunId}: a record under a wider ID (another implementation's) is foreign.
     */
    private RunRecord requireOurs(RunRecord rec, String runId) throws Unreadable {
        if (!rec.scopeIdHex().equals(scopeIdHex) || rec.keyGeneration() != keyGeneration || !rec.runId().equals(runId)
                || !RunId.isValid(rec.runId())) {
            throw new Unreadable(UnreadableReason.FOREIGN, null);
        }
        return rec;
    }

    /**
     * A record file that is not a record of this authority, and why. Stackless; carries no
     * content but the record's format text for {@link UnreadableReason#UNSUPPORTED_FORMAT}.
     */
    static final class Unreadable extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient UnreadableReason reason;
        private final String format;

        Unreadable(UnreadableReason reason, String format) {
            super(reason.wire(), null, false, false);
            this.reason = reason;
            this.format = format;
        }

        UnreadableReason reason() {
            return reason;
        }

        /**
         * The refusal a caller sees: {@code unsupported_format} naming the format (public), or
         * else the one verification failure.
         */
        AuthorityException toAuthority(String what) {
            if (reason == UnreadableReason.UNSUPPORTED_FORMAT) {
                return new AuthorityException.UnsupportedFormat(what + ": its record is in snapshot format \"" + format
                        + "\", which this helper does not accept; nothing was written");
            }
            return new AuthorityException.Verification();
        }
    }

    /** {@code next} encoded and MACed, ready for {@link #writeSigned}. */
    byte[] sign(RunRecord next) {
        return RecordCodec.signedFile(next, recordMac);
    }

    /** Writes a signed record file atomically under the run's state file name. */
    void writeSigned(RunId id, byte[] file) throws DirectoryRefusedException {
        dir.writeAtomically(stateFile(id), file);
    }

    private static String stateFile(RunId id) {
        return RecordCodec.fileStem(id.value()) + ".state";
    }

    /** Closes the directory, then destroys the record key (even when the close fails). */
    void close() {
        try {
            dir.close();
        } finally {
            recordMac.destroy();
        }
    }
}
