package spice.authority.os.windows;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.win32.StdCallLibrary;

/**
 * The door to {@code iphlpapi.dll}: raw JNA bindings, names verbatim, each method's Javadoc the C
 * prototype. Only {@link JnaWindowsCalls} calls it. The table it fills is copied out as bytes and
 * decoded by {@link TcpTable}, which is pure Java.
 *
 * <p>The nested structures document the rows' C layout; {@link TcpTable} decodes the bytes with
 * its own offsets, and {@code StructureLayoutTest} checks those against these structures as JNA
 * lays them out (MSVC alignment) and against the documented sizes.
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

    /**
     * {@code typedef struct _MIB_TCPROW_OWNER_MODULE { DWORD dwState; DWORD dwLocalAddr; DWORD
     * dwLocalPort; DWORD dwRemoteAddr; DWORD dwRemotePort; DWORD dwOwningPid; LARGE_INTEGER
     * liCreateTimestamp; ULONGLONG OwningModuleInfo[TCPIP_OWNING_MODULE_SIZE]; }} (160 bytes;
     * {@code TCPIP_OWNING_MODULE_SIZE} is 16)
     */
    @Structure.FieldOrder({"dwState", "dwLocalAddr", "dwLocalPort", "dwRemoteAddr", "dwRemotePort", "dwOwningPid",
            "liCreateTimestamp", "OwningModuleInfo"})
    final class MIB_TCPROW_OWNER_MODULE extends Structure {
        public int dwState;
        public int dwLocalAddr;
        public int dwLocalPort;
        public int dwRemoteAddr;
        public int dwRemotePort;
        public int dwOwningPid;
        public long liCreateTimestamp;
        public long[] OwningModuleInfo = new long[16];

        public MIB_TCPROW_OWNER_MODULE() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _MIB_TCP6ROW_OWNER_MODULE { UCHAR ucLocalAddr[16]; DWORD dwLocalScopeId;
     * DWORD dwLocalPort; UCHAR ucRemoteAddr[16]; DWORD dwRemoteScopeId; DWORD dwRemotePort; DWORD
     * dwState; DWORD dwOwningPid; LARGE_INTEGER liCreateTimestamp; ULONGLONG
     * OwningModuleInfo[TCPIP_OWNING_MODULE_SIZE]; }} (192 bytes)
     */
    @Structure.FieldOrder({"ucLocalAddr", "dwLocalScopeId", "dwLocalPort", "ucRemoteAddr", "dwRemoteScopeId",
            "dwRemotePort", "dwState", "dwOwningPid", "liCreateTimestamp", "OwningModuleInfo"})
    final class MIB_TCP6ROW_OWNER_MODULE extends Structure {
        public byte[] ucLocalAddr = new byte[16];
        public int dwLocalScopeId;
        public int dwLocalPort;
        public byte[] ucRemoteAddr = new byte[16];
        public int dwRemoteScopeId;
        public int dwRemotePort;
        public int dwState;
        public int dwOwningPid;
        public long liCreateTimestamp;
        public long[] OwningModuleInfo = new long[16];

        public MIB_TCP6ROW_OWNER_MODULE() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _MIB_TCPTABLE_OWNER_MODULE { DWORD dwNumEntries; MIB_TCPROW_OWNER_MODULE
     * table[ANY_SIZE]; }} (one row shown; the rows are 8-byte aligned, so {@code table} is at 8)
     */
    @Structure.FieldOrder({"dwNumEntries", "table"})
    final class MIB_TCPTABLE_OWNER_MODULE extends Structure {
        public int dwNumEntries;
        public MIB_TCPROW_OWNER_MODULE[] table = new MIB_TCPROW_OWNER_MODULE[1];

        public MIB_TCPTABLE_OWNER_MODULE() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }

    /**
     * {@code typedef struct _MIB_TCP6TABLE_OWNER_MODULE { DWORD dwNumEntries; MIB_TCP6ROW_OWNER_MODULE
     * table[ANY_SIZE]; }} ({@code table} at 8)
     */
    @Structure.FieldOrder({"dwNumEntries", "table"})
    final class MIB_TCP6TABLE_OWNER_MODULE extends Structure {
        public int dwNumEntries;
        public MIB_TCP6ROW_OWNER_MODULE[] table = new MIB_TCP6ROW_OWNER_MODULE[1];

        public MIB_TCP6TABLE_OWNER_MODULE() {
            super(ALIGN_MSVC);
        }

        int offsetOf(String field) {
            return fieldOffset(field);
        }
    }
}
