package spice.authority.os;

/** Whether {@link SecureDirectory#lock(String, LockMode)} waits for a held lock. */
public enum LockMode {
    /** Wait until the lock is free (used for {@code identity.lock}). */
    BLOCKING,
    /** Fail at once with {@link DirectoryRefusedException.Category#BUSY} when the lock is held (run locks). */
    NON_BLOCKING
}
