package spice.authority.host.store;

/**
 * The store refused or failed: its message names the file and what was refused and why, never a
 * payload, an envelope or a key. The one exception {@link HostStore} and {@link StoreInspection}
 * throw.
 */
public final class StoreException extends Exception {
    private static final long serialVersionUID = 1L;

    StoreException(String message) {
        super(message);
    }

    StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
