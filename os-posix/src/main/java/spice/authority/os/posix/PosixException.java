package spice.authority.os.posix;

/**
 * A failed C library call: the call's name and the errno captured for that call. Stackless
 * and internal: the layer that knows which path component was involved turns it into a
 * {@link spice.authority.os.DirectoryRefusedException}.
 */
final class PosixException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int errno;
    private final String call;

    PosixException(int errno, String call) {
        super(null, null, false, false);
        this.errno = errno;
        this.call = call;
    }

    int errno() {
        return errno;
    }

    String call() {
        return call;
    }

    @Override
    public String getMessage() {
        return call + ": " + PosixPlatform.current().map(p -> p.errnoName(errno)).orElse("errno " + errno);
    }
}
