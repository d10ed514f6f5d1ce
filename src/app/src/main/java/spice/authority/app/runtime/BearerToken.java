package spice.authority.app.runtime;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.SecureDirectory;
import spice.authority.snapshot.crypto.EndpointProofMac;

/**
 * The helper's bearer token on TCP: 32 random bytes, held as their 64 lowercase hex digits (the
 * bytes a client sends after {@code Bearer }, and the key of the endpoint proof).
 *
 * <p><b>Guarantees.</b> The token never leaves this object except into the token file
 * ({@link #writeTo}) and as the key of a MAC ({@link #endpointProof}); {@link #toString} is
 * redacted; {@link #matches} compares in constant time; {@link #close} zeroes it, after which it
 * matches nothing and proves nothing.
 */
public final class BearerToken implements AutoCloseable {
    private final byte[] hex;
    private volatile boolean destroyed;

    private BearerToken(byte[] hex) {
        this.hex = hex;
    }

    /** A fresh random token. */
    public static BearerToken generate(SecureRandom random) {
        byte[] raw = new byte[32];
        random.nextBytes(raw);
        try {
            return new BearerToken(HexFormat.of().formatHex(raw).getBytes(StandardCharsets.US_ASCII));
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    /** A token of exactly these ASCII bytes (copied; the caller zeroes its own). Tests and clients' fixtures. */
    public static BearerToken of(byte[] ascii) {
        if (ascii == null || ascii.length == 0) {
            throw new IllegalArgumentException("a bearer token is not empty");
        }
        return new BearerToken(ascii.clone());
    }

    /** Writes the token to {@code name} in {@code dir} (atomically; the directory decides its mode). */
    public void writeTo(SecureDirectory dir, String name) throws DirectoryRefusedException {
        dir.writeAtomically(name, live());
    }

    /**
     * Whether {@code presented} is this token, compared in constant time (for equal lengths). A
     * zeroed token matches nothing.
     */
    public boolean matches(byte[] presented) {
        return !destroyed && presented != null && MessageDigest.isEqual(hex, presented);
    }

    /** The endpoint proof's MAC of {@code nonce} on a connection accepted at {@code address}:{@code port}, under this token. */
    public byte[] endpointProof(byte[] nonce, byte[] address, int port) {
        return EndpointProofMac.of(live(), nonce, address, port);
    }

    private byte[] live() {
        if (destroyed) {
            throw new IllegalStateException("the bearer token was zeroed");
        }
        return hex;
    }

    /** Zeroes the token; idempotent. */
    @Override
    public void close() {
        destroyed = true;
        Arrays.fill(hex, (byte) 0);
    }

    public boolean isDestroyed() {
        return destroyed;
    }

    @Override
    public String toString() {
        return "BearerToken[redacted]";
    }
}
