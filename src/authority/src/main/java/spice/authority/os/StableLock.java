package spice.authority.os;

/**
 * An exclusive lock held on a stable lock file inside a {@link SecureDirectory}.
 *
 * <p><b>Guarantees.</b> On POSIX the lock is a {@code flock(2)} lock on its own open file
 * description, so it excludes other processes (including the Go reference
 * implementation) and every other {@code StableLock} on the same file in this process.
 * The lock file is validated (regular, owned by the effective user, one link, mode
 * {@code 0600}) before it is locked, and it is never unlinked or replaced by this SPI.
 * {@link #close()} releases the lock and its descriptor; it is idempotent.
 */
public interface StableLock extends AutoCloseable {

    /** The lock file's name inside its directory. */
    String name();

    /** The identity of the locked file. */
    FileIdentity identity();

    /** Releases the lock ({@code LOCK_UN}) and closes the descriptor. Never throws. */
    @Override
    void close();
}
