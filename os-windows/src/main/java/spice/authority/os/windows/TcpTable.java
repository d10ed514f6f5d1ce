package spice.authority.os.windows;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes the tables {@code GetExtendedTcpTable(TCP_TABLE_OWNER_PID_CONNECTIONS)} fills: pure Java
 * over the bytes, so every rule runs on any OS.
 *
 * <pre>
 * MIB_TCPTABLE_OWNER_PID  { DWORD dwNumEntries; MIB_TCPROW_OWNER_PID  table[]; }  rows at 4, 24 bytes each
 * MIB_TCPROW_OWNER_PID    { DWORD dwState; DWORD dwLocalAddr; DWORD dwLocalPort;
 *                           DWORD dwRemoteAddr; DWORD dwRemotePort; DWORD dwOwningPid; }
 * MIB_TCP6TABLE_OWNER_PID { DWORD dwNumEntries; MIB_TCP6ROW_OWNER_PID table[]; }  rows at 4, 56 bytes each
 * MIB_TCP6ROW_OWNER_PID   { UCHAR ucLocalAddr[16]; DWORD dwLocalScopeId; DWORD dwLocalPort;
 *                           UCHAR ucRemoteAddr[16]; DWORD dwRemoteScopeId; DWORD dwRemotePort;
 *                           DWORD dwState; DWORD dwOwningPid; }
 * </pre>
 *
 * Counts, states and pids are little-endian DWORDs. Addresses are in network byte order (the
 * IPv4 DWORD's bytes in memory are the address's four bytes in order). A port is in network byte
 * order in the low two bytes in memory of its DWORD; the upper 16 bits may hold uninitialized data
 * and are ignored. Scope ids are not read: the helper listens on a loopback literal only.
 */
final class TcpTable {

    static final int HEADER = 4;
    static final int ROW4 = 24;
    static final int ROW6 = 56;

    // MIB_TCPROW_OWNER_PID offsets
    static final int V4_LOCAL_ADDR = 4;
    static final int V4_LOCAL_PORT = 8;
    static final int V4_REMOTE_ADDR = 12;
    static final int V4_REMOTE_PORT = 16;
    static final int V4_PID = 20;
    // MIB_TCP6ROW_OWNER_PID offsets
    static final int V6_LOCAL_ADDR = 0;
    static final int V6_LOCAL_PORT = 20;
    static final int V6_REMOTE_ADDR = 24;
    static final int V6_REMOTE_PORT = 44;
    static final int V6_PID = 52;

    private TcpTable() {}

    /** One connection: its two ends and the pid that owns it ({@code dwOwningPid}, unsigned). */
    record Row(InetAddress localAddress, int localPort, InetAddress remoteAddress, int remotePort, long pid) {}

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
                        Integer.toUnsignedLong(b.getInt(o + V4_PID))));
            } else {
                rows.add(new Row(address(buf, o + V6_LOCAL_ADDR, 16), port(buf, o + V6_LOCAL_PORT),
                        address(buf, o + V6_REMOTE_ADDR, 16), port(buf, o + V6_REMOTE_PORT),
                        Integer.toUnsignedLong(b.getInt(o + V6_PID))));
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
