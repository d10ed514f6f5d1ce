package spice.authority.os.windows;

/**
 * A failed Windows call: its name and the error captured for that call, either a Win32 error
 * ({@code GetLastError}, or the return value of calls such as {@code GetSecurityInfo}) or an
 * {@code NTSTATUS}. Stackless and internal: the layer that knows which path component was
 * involved turns it into a {@link spice.authority.os.DirectoryRefusedException}.
 */
final class WindowsException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int code;
    private final boolean ntStatus;
    private final String call;

    private WindowsException(String call, int code, boolean ntStatus) {
        super(null, null, false, false);
        this.call = call;
        this.code = code;
        this.ntStatus = ntStatus;
    }

    /** A Win32 error code from {@code call}. */
    static WindowsException win32(String call, int error) {
        return new WindowsException(call, error, false);
    }

    /** An {@code NTSTATUS} from {@code call}. */
    static WindowsException nt(String call, int status) {
        return new WindowsException(call, status, true);
    }

    String call() {
        return call;
    }

    /** The Win32 error, or 0 for an NTSTATUS failure. */
    int error() {
        return ntStatus ? 0 : code;
    }

    /** The NTSTATUS, or 0 for a Win32 failure. */
    int status() {
        return ntStatus ? code : 0;
    }

    boolean isNtStatus() {
        return ntStatus;
    }

    @Override
    public String getMessage() {
        return ntStatus ? String.format("%s: NTSTATUS 0x%08X", call, code) : call + ": Win32 error " + code;
    }
}
