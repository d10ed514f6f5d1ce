package spice.authority.os;

/** How {@link SecureDirectoryProvider#open(String, OpenMode)} treats a missing directory. */
public enum OpenMode {
    /**
     * Create missing components (the leaf with mode exactly {@code 0700}), then validate.
     * An existing leaf is only validated: it is never chmodded or chowned.
     */
    CREATE_OR_VALIDATE,
    /**
     * Validate only: nothing is created, chmodded or written, and the returned directory
     * refuses {@link SecureDirectory#writeAtomically} and the creation of lock files.
     */
    VALIDATE_ONLY
}
