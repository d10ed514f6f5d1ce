package spice.authority.snapshot.crypto;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * HMAC-SHA256 (RFC 2104) over the JDK's SHA-256, holding only the padded key blocks so that they
 * can be zeroed. Thread-safe: each computation uses its own digest.
 *
 * <p><b>Guarantees.</b> {@link #verify} compares in constant time and signals failure only by
 * throwing; {@link #destroy()} zeroes the key blocks. No method prints key material.
 */
public final class HmacSha256 implements AutoCloseable {
    public static final int MAC_LENGTH = 32;
    private static final int BLOCK = 64;
    private static final MessageDigest PROTOTYPE;

    static {
        try {
            PROTOTYPE = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final byte[] ipad = new byte[BLOCK];
    private final byte[] opad = new byte[BLOCK];
    private volatile boolean destroyed;

    /** A MAC keyed with a copy of {@code key}'s bytes (the key itself stays with its owner). */
    public HmacSha256(SecretKeyBytes key) {
        this(key.unsafeBytes());
    }

    /**
     * Keyed with raw bytes (up to 64; longer keys are hashed first, per RFC 2104). Package-private:
     * outside this package a MAC is made only from a {@link SecretKeyBytes}, never from loose bytes.
     */
    HmacSha256(byte[] rawKey) {
        byte[] k = rawKey.length > BLOCK ? sha256().digest(rawKey) : rawKey;
        for (int i = 0; i < BLOCK; i++) {
            byte b = i < k.length ? k[i] : 0;
            ipad[i] = (byte) (b ^ 0x36);
            opad[i] = (byte) (b ^ 0x5c);
        }
        if (k != rawKey) {
            Arrays.fill(k, (byte) 0);
        }
    }

    /**
     * One HMAC under a key that is not an authority key (a bearer token, any length), over the
     * concatenation of {@code parts}. The padded key blocks are zeroed before this returns, so no
     * copy of the key outlives the call (unlike {@code javax.crypto.Mac}, whose key copies cannot be
     * wiped); {@code rawKey} itself stays with its owner, unchanged.
     *
     * Package-private: outside this package a MAC is made only from a {@link SecretKeyBytes}, or as
     * the one {@link EndpointProofMac}.
     *
     * @throws IllegalArgumentException if {@code rawKey} is empty
     */
    static byte[] once(byte[] rawKey, byte[]... parts) {
        if (rawKey.length == 0) {
            throw new IllegalArgumentException("empty MAC key");
        }
        try (HmacSha256 mac = new HmacSha256(rawKey)) {
            return mac.compute(parts);
        }
    }

    /** A fresh SHA-256 digest. */
    public static MessageDigest sha256() {
        try {
            return (MessageDigest) PROTOTYPE.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** SHA-256 of {@code data}. */
    public static byte[] sha256(byte[] data) {
        return sha256().digest(data);
    }

    /** HMAC over the concatenation of {@code parts}. */
    public byte[] compute(byte[]... parts) {
        if (destroyed) {
            throw new IllegalStateException("MAC key destroyed");
        }
        MessageDigest md = sha256();
        md.update(ipad);
        for (byte[] p : parts) {
            md.update(p);
        }
        byte[] inner = md.digest();
        md.update(opad);
        md.update(inner);
        return md.digest();
    }

    /**
     * Verifies {@code mac} over {@code parts} in constant time.
     *
     * @throws VerificationException on any mismatch (including a wrong length)
     */
    public void verify(byte[] mac, byte[]... parts) throws VerificationException {
        byte[] expected = compute(parts);
        if (!MessageDigest.isEqual(expected, mac)) {
            throw VerificationException.INSTANCE;
        }
    }

    /** Zeroes the key blocks. Idempotent. */
    public void destroy() {
        destroyed = true;
        Arrays.fill(ipad, (byte) 0);
        Arrays.fill(opad, (byte) 0);
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return "HmacSha256[<redacted>]";
    }
}
