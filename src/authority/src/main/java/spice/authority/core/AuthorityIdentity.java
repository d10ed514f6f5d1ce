package spice.authority.core;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.json.GoText;

/**
 * The authority identity (wire-format.md d.2): key generation (u64be), 32-byte public scope ID and
 * 32-byte HMAC master key, stored as exactly 72 bytes in {@code identity.key}.
 *
 * <p><b>Guarantees.</b> Valid from birth: generation at least 1, scope and key not all zero and
 * not equal. {@link #toString()} shows the scope and generation only. {@link #close()} zeroes the
 * master key.
 */
public final class AuthorityIdentity implements AutoCloseable {
    /** The identity file's name in the authority directory (wire-format d.1). */
    public static final String FILE_NAME = "identity.key";

    public static final int FILE_LENGTH = 72;

    private final long generation;
    private final byte[] scopeId;
    private final SecretKeyBytes masterKey;

    private AuthorityIdentity(long generation, byte[] scopeId, SecretKeyBytes masterKey) {
        this.generation = generation;
        this.scopeId = scopeId;
        this.masterKey = masterKey;
    }

    /**
     * Parses {@code identity.key}.
     *
     * @throws IllegalArgumentException with a content-free reason when the file is not a valid identity
     */
    public static AuthorityIdentity parse(byte[] file) {
        if (file.length != FILE_LENGTH) {
            throw new IllegalArgumentException("identity file must be exactly 72 bytes");
        }
        long gen = 0;
        for (int i = 0; i < 8; i++) {
            gen = (gen << 8) | (file[i] & 0xFF);
        }
        byte[] scope = Arrays.copyOfRange(file, 8, 40);
        byte[] key = Arrays.copyOfRange(file, 40, 72);
        try {
            return validated(gen, scope, key);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /** A fresh identity at generation 1 from 64 random bytes (scope first, key second). */
    public static AuthorityIdentity generate(SecureRandom random) {
        byte[] material = new byte[64];
        random.nextBytes(material);
        byte[] scope = Arrays.copyOfRange(material, 0, 32);
        byte[] key = Arrays.copyOfRange(material, 32, 64);
        Arrays.fill(material, (byte) 0);
        try {
            return validated(1, scope, key);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    private static AuthorityIdentity validated(long gen, byte[] scope, byte[] key) {
        if (gen == 0) {
            throw new IllegalArgumentException("identity generation is 0");
        }
        if (isZero(scope)) {
            throw new IllegalArgumentException("identity scope is all zeros");
        }
        if (isZero(key)) {
            throw new IllegalArgumentException("identity key is all zeros");
        }
        if (MessageDigest.isEqual(scope, key)) {
            throw new IllegalArgumentException("identity scope equals its key");
        }
        return new AuthorityIdentity(gen, scope, SecretKeyBytes.copyOf(key, SecretAccess.grant()));
    }

    private static boolean isZero(byte[] b) {
        int acc = 0;
        for (byte x : b) {
            acc |= x;
        }
        return acc == 0;
    }

    /** The 72-byte file content. The caller must zero it after writing. */
    public byte[] encode() {
        byte[] out = new byte[FILE_LENGTH];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (generation >>> (56 - 8 * i));
        }
        System.arraycopy(scopeId, 0, out, 8, 32);
        byte[] key = masterKey.toByteArray(SecretAccess.grant());
        System.arraycopy(key, 0, out, 40, 32);
        Arrays.fill(key, (byte) 0);
        return out;
    }

    public long generation() {
        return generation;
    }

    public byte[] scopeId() {
        return scopeId.clone();
    }

    public String scopeIdHex() {
        return GoText.hex(scopeId);
    }

    /** The master key (owned by this identity; do not close it). */
    public SecretKeyBytes masterKey() {
        return masterKey;
    }

    @Override
    public void close() {
        masterKey.destroy();
    }

    @Override
    public String toString() {
        return "AuthorityIdentity[scope_id=" + scopeIdHex() + ", generation=" + Long.toUnsignedString(generation)
                + ", key=<redacted>]";
    }
}
