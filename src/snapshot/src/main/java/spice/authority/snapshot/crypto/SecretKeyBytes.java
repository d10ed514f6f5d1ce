package spice.authority.snapshot.crypto;

import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;

/**
 * A 32-byte secret key (the authority master key, or a per-run subkey).
 *
 * <p><b>Guarantees.</b> The bytes are readable only with a {@link SecretAccess} token; comparison
 * is constant-time; {@link #toString()} prints {@code <redacted>}; {@link #destroy()} (and
 * {@link #close()}) overwrite the bytes with zeros, after which every use throws
 * {@link IllegalStateException}. There is no {@code equals} that could leak timing.
 */
public final class SecretKeyBytes implements AutoCloseable {
    /** Key length in bytes (HMAC-SHA256 keys of the authority). */
    public static final int LENGTH = 32;

    private final byte[] key;
    private volatile boolean destroyed;

    private SecretKeyBytes(byte[] key) {
        this.key = key;
    }

    /**
     * Copies {@code bytes} into a new key. The caller should zero its own array afterwards.
     *
     * @throws IllegalArgumentException unless exactly 32 bytes
     */
    public static SecretKeyBytes copyOf(byte[] bytes, SecretAccess access) {
        Objects.requireNonNull(access, "access");
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException("secret key must be 32 bytes");
        }
        return new SecretKeyBytes(bytes.clone());
    }

    /** Takes ownership of {@code bytes} without copying (used for freshly derived keys). */
    static SecretKeyBytes adopt(byte[] bytes) {
        if (bytes.length != LENGTH) {
            Arrays.fill(bytes, (byte) 0);
            throw new IllegalArgumentException("secret key must be 32 bytes");
        }
        return new SecretKeyBytes(bytes);
    }

    /** A copy of the key bytes. The caller must zero it when done. */
    public byte[] toByteArray(SecretAccess access) {
        Objects.requireNonNull(access, "access");
        checkLive();
        return key.clone();
    }

    /** Internal: the live array, for primitives in this package that zero what they derive. */
    byte[] unsafeBytes() {
        checkLive();
        return key;
    }

    /** Constant-time comparison of the key bytes. */
    public boolean equalsConstantTime(SecretKeyBytes other) {
        checkLive();
        return MessageDigest.isEqual(key, other.unsafeBytes());
    }

    private void checkLive() {
        if (destroyed) {
            throw new IllegalStateException("secret key destroyed");
        }
    }

    /** Overwrites the key with zeros. Idempotent. */
    public void destroy() {
        destroyed = true;
        Arrays.fill(key, (byte) 0);
    }

    public boolean isDestroyed() {
        return destroyed;
    }

    /** Same as {@link #destroy()}. */
    @Override
    public void close() {
        destroy();
    }

    /**
     * Test hook: true when the retained array is all zeros, proving {@link #destroy()} really
     * overwrote it (readable even after destruction; reveals nothing else).
     */
    public boolean storageIsZeroed() {
        int acc = 0;
        for (byte b : key) {
            acc |= b;
        }
        return acc == 0;
    }

    @Override
    public String toString() {
        return "<redacted>";
    }
}
