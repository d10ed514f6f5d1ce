package spice.authority.host;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Reads the helper's bearer token for loopback TCP, once per request; the caller zeroes the
 * returned bytes after use.
 *
 * <p>Guarantees of an implementation: the bytes are visible ASCII only (so they cannot split a
 * header); a missing file is a {@link HelperUnreachable}; no message contains file content.
 */
@FunctionalInterface
public interface TokenReader {
    byte[] read(Path tokenFile) throws IOException;

    /** The library's reader: {@link TokenFiles#read(Path)}. */
    static TokenReader ownerOnly() {
        return TokenFiles::read;
    }
}
