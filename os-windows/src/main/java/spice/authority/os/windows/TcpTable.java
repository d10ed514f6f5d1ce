package spice.authority.os.windows;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes the tables {@code GetExtendedTcpTable(TCP_TABLE_OWNER_MODULE_CONNECTIONS)} fills: pure
 * Java over the bytes, so every rule runs on any OS.
 *
 * <pre>
 * MIB_TCPTABLE_OWNER_MODULE  { DWORD dwNumEntries; MIB_TCPROW_OWNER_MODULE  table[]; }  rows at 8, 160 bytes each
 * MIB_TCPROW_OWNER_MODULE    { DWORD dwState; DWORD dwLocalAddr; DWORD dwLocalPort;
 *                              DWORD dwRemoteAddr; DWORD dwRemotePort; DWORD dwOwningPid;
 *                              LARGE_INTEGER liCreateTimestamp;            (at 24)
 *                              ULONGLONG OwningModuleInfo[16]; }
 * MIB_TCP6TABLE_OWNER_MODULE { DWORD dwNumEntries; MIB_TCP6ROW_OWNER_MODULE table[]; }  rows at 8, 192 bytes each
 * MIB_TCP6ROW_OWNER_MODULE   { UCHAR ucLocalAddr[16]; DWORD dwLocalScopeId; DWORD dwLocalPort;
 *                              UCHAR ucRemoteAddr[16]; DWORD dwRemoteScopeId; DWORD dwRemotePort;
 *                              DWORD dwState; DWORD dwOwningPid;
 *                              LARGE_INTEGER liCreateTimestamp;            (at 56)
 *                              ULONGLONG OwningModuleInfo[16]; }
 * </pre>
 *
 * The rows hold 8-byte members, so they are 8-byte aligned and the table starts at 8, not 4 (the
 * header's other four bytes are padding). Counts, states and pids are little-endian DWORDs; the
 * creation timestamp is a little-endian LARGE_INTEGER in FILETIME units (100 ns since 1601 UTC).
 * Addresses are in network byte order (the IPv4 DWORD's bytes in memory are the address's four
 * bytes in order). A port is in network byte order in the low two bytes in memory of its DWORD;
 * the upper 16 bits may hold uninitialized data and are ignored. Scope ids and the module info are
 * not read: the helper listens on a loopback literal only.
 */
final class TcpTable {

    /** dwNumEntries and four bytes of padding: the rows are 8-byte aligned. */
    static final int HEADER = 8;
    static final int ROW4 = 160;
    static final int ROW6 = 192;

    // MIB_TCPROW_OWNER_MODULE offsets
    static final int V4_LOCAL_ADDR = 4;
    static final int V4_LOCAL_PORT = 8;
    static final int V4_REMOTE_ADDR = 12;
    static final int V4_REMOTE_PORT = 16;
    static final int V4_PID = 20;
    static final int V4_CREATED = 24;
    // MIB_TCP6ROW_OWNER_MODULE offsets
    static final int V6_LOCAL_ADDR = 0;
    static final int V6_LOCAL_PORT = 20;
    static final int V6_REMOTE_ADDR = 24;
    static final int V6_REMOTE_PORT = 44;
    static final int V6_PID = 52;
    static final int V6_CREATED = 56;

    private TcpTable() {}

    /**
     * One connection: its two ends, the pid that owns it ({@code dwOwningPid}, unsigned) and when it
     * was created ({@code liCreateTimestamp}, 100 ns ticks since 1601 UTC; 0 when Windows did not
     * record it).
     */
    record Row(InetAddress localAddress, int localPort, InetAddress remoteAddress, int remotePort, long pid,
               long created) {}

    /** Thrown when the bytes are not a table of this family (entry count beyond the bytes). */
    static final class MalformedTableException extends Exception {
        private static final long serialVersionUID = 1L;

        MalformedTableException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * The rows of a table of {@code family} ({@link Win32#AF_INET} or {@link Win32#AF_INET6}) held in
     * {@code buf}.
     *
     * @throws MalformedTableException when the entry count does not fit in {@code buf}
     */
    static List<Row> decode(int family, byte[] buf) throws MalformedTableException {
        int rowSize = switch (family) {
            case Win32.AF_INET -> ROW4;
            case Win32.AF_INET6 -> ROW6;
            default -> throw new IllegalArgumentException("not AF_INET or AF_INET6: " + family);
        };
        if (buf.length < HEADER) {
            throw new MalformedTableException("TCP table shorter than its header");
        }
        ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
        long count = Integer.toUnsignedLong(b.getInt(0));
        if (count > (buf.length - HEADER) / rowSize) {
            throw new MalformedTableException("TCP table claims " + count + " rows, " + buf.length + " bytes hold "
                    + (buf.length - HEADER) / rowSize);
        }
        List<Row> rows = new ArrayList<>((int) count);
        for (int i = 0; i < count; i++) {
            int o = HEADER + i * rowSize;
            if (family == Win32.AF_INET) {
                rows.add(new Row(address(buf, o + V4_LOCAL_ADDR, 4), port(buf, o + V4_LOCAL_PORT),
                        address(buf, o + V4_REMOTE_ADDR, 4), port(buf, o + V4_REMOTE_PORT),
                        Integer.toUnsignedLong(b.getInt(o + V4_PID)), b.getLong(o + V4_CREATED)));
            } else {
                rows.add(new Row(address(buf, o + V6_LOCAL_ADDR, 16), port(buf, o + V6_LOCAL_PORT),
                        address(buf, o + V6_REMOTE_ADDR, 16), port(buf, o + V6_REMOTE_PORT),
                        Integer.toUnsignedLong(b.getInt(o + V6_PID)), b.getLong(o + V6_CREATED)));
            }
        }
        return rows;
    }

    /** A port: network byte order in the DWORD's first two bytes; the other two are ignored. */
    static int port(byte[] buf, int offset) {
        return (buf[offset] & 0xff) << 8 | (buf[offset + 1] & 0xff);
    }

    private static InetAddress address(byte[] buf, int offset, int length) {
        byte[] a = new byte[length];
        System.arraycopy(buf, offset, a, 0, length);
        try {
            return InetAddress.getByAddress(a); // no name lookup: a literal of 4 or 16 bytes
        } catch (UnknownHostException e) {
            throw new AssertionError("4 or 16 bytes are always an address", e);
        }
    }
}
