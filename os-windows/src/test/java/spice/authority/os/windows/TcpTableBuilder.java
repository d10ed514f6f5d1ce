package spice.authority.os.windows;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds {@code MIB_TCPTABLE_OWNER_MODULE} and {@code MIB_TCP6TABLE_OWNER_MODULE} bytes as Windows
 * lays them out (see {@link TcpTable}), independently of the decoder: a count and four bytes of
 * padding (not zero), then rows of 160 or 192 bytes written out field by field here, ports in
 * network byte order with garbage in the DWORD's upper two bytes, the module info filled with
 * garbage.
 */
final class TcpTableBuilder {

    /** The connections' creation time unless a row names its own: after every process the tests spawn. */
    static final long CREATED = 1_000_000L;

    private record R(InetAddress local, int localPort, InetAddress remote, int remotePort, int pid, long created) {}

    private final boolean v6;
    private final List<R> rows = new ArrayList<>();
    private Integer claimedCount;

    private TcpTableBuilder(boolean v6) {
        this.v6 = v6;
    }

    static TcpTableBuilder v4() {
        return new TcpTableBuilder(false);
    }

    static TcpTableBuilder v6() {
        return new TcpTableBuilder(true);
    }

    TcpTableBuilder row(String local, int localPort, String remote, int remotePort, int pid) {
        return row(local, localPort, remote, remotePort, pid, CREATED);
    }

    /** A row whose {@code liCreateTimestamp} is {@code created}. */
    TcpTableBuilder row(String local, int localPort, String remote, int remotePort, int pid, long created) {
        rows.add(new R(InetAddress.ofLiteral(local), localPort, InetAddress.ofLiteral(remote), remotePort, pid,
                created));
        return this;
    }

    /** Writes this entry count instead of the number of rows. */
    TcpTableBuilder claim(int count) {
        claimedCount = count;
        return this;
    }

    byte[] build() {
        int size = v6 ? 192 : 160;
        ByteBuffer b = ByteBuffer.allocate(8 + rows.size() * size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(claimedCount != null ? claimedCount : rows.size());
        b.putInt(0x7E7E7E7E); // padding: the rows are 8-byte aligned
        for (R r : rows) {
            if (v6) {
                b.put(bytes16(r.local())).putInt(0).put(port(r.localPort()))
                        .put(bytes16(r.remote())).putInt(0).put(port(r.remotePort()))
                        .putInt(5) // MIB_TCP_STATE_ESTAB
                        .putInt(r.pid());
            } else {
                b.putInt(5).put(r.local().getAddress()).put(port(r.localPort()))
                        .put(r.remote().getAddress()).put(port(r.remotePort())).putInt(r.pid());
            }
            b.putLong(r.created()); // liCreateTimestamp
            for (int i = 0; i < 16; i++) {
                b.putLong(0xC3C3_C3C3_C3C3_C3C3L); // OwningModuleInfo: not read
            }
        }
        return b.array();
    }

    private static byte[] bytes16(InetAddress a) {
        byte[] x = a.getAddress();
        if (x.length != 16) {
            throw new IllegalArgumentException("not an IPv6 literal: " + a);
        }
        return x;
    }

    /** Network byte order in the first two bytes; the upper two hold garbage, as Windows allows. */
    private static byte[] port(int p) {
        return new byte[] {(byte) (p >>> 8), (byte) p, (byte) 0xC3, (byte) 0x7E};
    }
}
