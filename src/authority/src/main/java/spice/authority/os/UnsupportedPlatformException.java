package spice.authority.os;

/**
 * Thrown when no {@link SecureDirectoryProvider} supports the running platform. There is
 * no fallback: a helper that cannot defend its directory must not start.
 */
public final class UnsupportedPlatformException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message names the platform and what is supported */
    public UnsupportedPlatformException(String message) {
        super(message);
    }
}
