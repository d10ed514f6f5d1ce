package spice.authority.snapshot.crypto;

/**
 * A capability that must be presented to read secret key bytes. Every call site that reads a key
 * names {@link #grant()}, so a search for it lists every place secret bytes leave their holder.
 */
public final class SecretAccess {
    private static final SecretAccess INSTANCE = new SecretAccess();

    private SecretAccess() {}

    /** Grants access. Call only where key bytes must be persisted or fed to a primitive. */
    public static SecretAccess grant() {
        return INSTANCE;
    }
}
