package spice.authority.os.windows;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.win32.StdCallLibrary;

/**
 * The door to {@code iphlpapi.dll}: raw JNA bindings, names verbatim, each method's Javadoc the C
 * prototype. Only {@link JnaWindowsCalls} calls it. The table it fills is copied out as bytes and
 * decoded by {@link TcpTable}, which is pure Java.
 *
 * <p>NOT RUN: no method of this door has been called on Windows yet (see README.md).
 */
interface Iphlpapi extends StdCallLibrary {

    /**
     * {@code DWORD GetExtendedTcpTable(PVOID pTcpTable, PDWORD pdwSize, BOOL bOrder, ULONG ulAf,
     * TCP_TABLE_CLASS TableClass, ULONG Reserved);} Returns a Win32 error code (0 on success,
     * {@code ERROR_INSUFFICIENT_BUFFER} with the needed size in {@code *pdwSize}).
     */
    int GetExtendedTcpTable(Pointer pTcpTable, IntByReference pdwSize, boolean bOrder, int ulAf, int TableClass,
                            int Reserved);
}
