package spice.authority.core;

import java.security.SecureRandom;
import java.util.Arrays;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileIdentity;
import spice.authority.os.SecureDirectory;

/**
 * The authority's identity at open: reads {@code identity.key}, or creates it once with a fresh
 * random scope and key, and checks that the file read (or written) is the one the name still
 * leads to. Called by {@link RunAuthority#open} under the identity lock.
 */
final class IdentityLoader {
    private IdentityLoader() {
    }

    /** The identity and the file it was read from (or written to). */
    record Loaded(AuthorityIdentity identity, FileIdentity file) {
    }

    /**
     * @throws AuthorityException.Unavailable when the identity file is refused, unreadable or
     *     cannot be created
     * @throws IllegalArgumentException when the file's content breaks its format
     */
    static Loaded load(SecureDirectory dir, SecureRandom random) throws AuthorityException.Unavailable {
        FileIdentity seen;
        try {
            seen = RecordStore.checkIdentityFile(dir, null);
        } catch (DirectoryRefusedException e) {
            if (e.category() != DirectoryRefusedException.Category.MISSING) {
                throw new AuthorityException.Unavailable("identity file refused: " + e.getMessage());
            }
            seen = null;
        }
        AuthorityIdentity id;
        if (seen == null) {
            id = AuthorityIdentity.generate(random);
            byte[] encoded = id.encode();
            try {
                dir.writeAtomically(RunAuthority.IDENTITY_KEY, encoded);
            } catch (DirectoryRefusedException | RuntimeException e) {
                id.close();
                throw new AuthorityException.Unavailable("could not create the identity file: " + e.getMessage());
            } finally {
                Arrays.fill(encoded, (byte) 0);
            }
        } else {
            byte[] file;
            try {
                file = dir.read(RunAuthority.IDENTITY_KEY, AuthorityIdentity.FILE_LENGTH);
            } catch (DirectoryRefusedException e) {
                throw new AuthorityException.Unavailable("identity file refused: " + e.getMessage());
            }
            try {
                id = AuthorityIdentity.parse(file);
            } finally {
                Arrays.fill(file, (byte) 0);
            }
        }
        // RACE: the name is checked again after the read (or the write), and must name the
        // file checked before the read; it is the file every later transition must still
        // find. A file swapped in and back out between the two checks goes unseen: only the
        // owner of the 0700 directory (the user this authority runs as) or root can rename
        // files in it, and either could as well rewrite the key itself.
        FileIdentity opened;
        try {
            opened = RecordStore.checkIdentityFile(dir, seen);
        } catch (DirectoryRefusedException | RuntimeException e) {
            id.close();
            throw new AuthorityException.Unavailable("identity file refused: " + e.getMessage());
        }
        return new Loaded(id, opened);
    }
}
