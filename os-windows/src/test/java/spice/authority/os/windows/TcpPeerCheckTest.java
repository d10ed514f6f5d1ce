package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.os.windows.SdBuilder.OTHER_USER;
import static spice.authority.os.windows.SdBuilder.USER;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatchException;

/**
 * The TCP peer check over {@link FakeWindows}: decoding of the owner-module tables, the choice of
 * the client's row, the connection's creation time against the process's, the bounded "table grew"
 * loop, and every refusal. Runs on Linux; it proves the
 * Java above the door, not {@code GetExtendedTcpTable} itself (never run, README.md).
 */
class TcpPeerCheckTest {

    private static final int HELPER = 4100;
    private static final int CLIENT = 5200;
    private static final InetSocketAddress PEER = new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 50123);
    private static final InetSocketAddress LOCAL = new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 7878);
    private static final InetSocketAddress PEER6 = new InetSocketAddress(InetAddress.ofLiteral("::1"), 50124);
    private static final InetSocketAddress LOCAL6 = new InetSocketAddress(InetAddress.ofLiteral("::1"), 7878);

    private FakeWindows fake;
    private TcpPeerCheck check;

    @BeforeEach
    void setUp() {
        fake = new FakeWindows(USER);
        fake.spawn(HELPER, 1);
        fake.spawn(CLIENT, 2);
        check = new TcpPeerCheck(fake, fake.user);
    }

    /** The client's row, the helper's mirror row and an unrelated connection. */
    private static TcpTableBuilder both(int clientPid) {
        return TcpTableBuilder.v4()
                .row("127.0.0.1", 7878, "127.0.0.1", 50123, HELPER) // the helper's accepted socket
                .row("127.0.0.1", 50123, "127.0.0.1", 7878, clientPid) // the client's socket
                .row("10.0.0.5", 50123, "10.0.0.9", 7878, 999);
    }

    private void refused(InetSocketAddress peer, InetSocketAddress local, String why) {
        assertThatThrownBy(() -> check.ownerPid(peer, local))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("TCP peer " + peer.getAddress().getHostAddress() + ":" + peer.getPort() + " refused")
                .hasMessageContaining(why);
    }

    // ---- decoding ----

    @Test
    void decode_v4_portsInNetworkOrderUpperBytesIgnored() throws Exception {
        byte[] t = TcpTableBuilder.v4().row("127.0.0.1", 0x1234, "127.0.0.2", 443, 0xFFFF_FFF0).build();
        List<TcpTable.Row> rows = TcpTable.decode(Win32.AF_INET, t);
        assertThat(rows).containsExactly(new TcpTable.Row(InetAddress.ofLiteral("127.0.0.1"), 0x1234,
                InetAddress.ofLiteral("127.0.0.2"), 443, 0xFFFF_FFF0L, TcpTableBuilder.CREATED));
    }

    /** The 128 bytes of ULONGLONG OwningModuleInfo[16], which must not be read: 0xEE. */
    private static byte[] moduleInfo() {
        byte[] m = new byte[128];
        java.util.Arrays.fill(m, (byte) 0xEE);
        return m;
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void decode_v4_handEncodedBytes() throws Exception {
        byte[] t = concat(new byte[] {
            1, 0, 0, 0, // dwNumEntries
            (byte) 0x99, (byte) 0x99, (byte) 0x99, (byte) 0x99, // padding: the rows are 8-byte aligned
            5, 0, 0, 0, // dwState ESTAB (row at 8)
            127, 0, 0, 1, // dwLocalAddr
            (byte) 0xC3, 0x50, 0x11, 0x22, // dwLocalPort 50000, garbage above
            127, 0, 0, 1, // dwRemoteAddr
            0x1E, (byte) 0xC6, 0, 0, // dwRemotePort 7878
            0x50, 0x14, 0, 0, // dwOwningPid 5200
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, (byte) 0xDB, 0x01 // liCreateTimestamp (row + 24)
        }, moduleInfo());
        assertThat(t).hasSize(8 + 160);
        assertThat(TcpTable.decode(Win32.AF_INET, t)).containsExactly(new TcpTable.Row(
                InetAddress.ofLiteral("127.0.0.1"), 50000, InetAddress.ofLiteral("127.0.0.1"), 7878, 5200,
                0x01DB_0304_0506_0708L));
    }

    @Test
    void decode_v6_handEncodedBytes() throws Exception {
        byte[] loop = InetAddress.ofLiteral("::1").getAddress();
        byte[] t = concat(new byte[] {
            1, 0, 0, 0, // dwNumEntries
            (byte) 0x99, (byte) 0x99, (byte) 0x99, (byte) 0x99 // padding
        }, loop, new byte[] {
            9, 0, 0, 0, // dwLocalScopeId (not read)
            (byte) 0xC3, 0x4C, 0x11, 0x22 // dwLocalPort 49996, garbage above
        }, loop, new byte[] {
            9, 0, 0, 0, // dwRemoteScopeId
            0x1E, (byte) 0xC6, 0, 0, // dwRemotePort 7878
            5, 0, 0, 0, // dwState
            0x50, 0x14, 0, 0, // dwOwningPid 5200
            0x18, 0x17, 0x16, 0x15, 0x14, 0x13, (byte) 0xDB, 0x01 // liCreateTimestamp (row + 56)
        }, moduleInfo());
        assertThat(t).hasSize(8 + 192);
        assertThat(TcpTable.decode(Win32.AF_INET6, t)).containsExactly(new TcpTable.Row(
                InetAddress.ofLiteral("::1"), 49996, InetAddress.ofLiteral("::1"), 7878, 5200,
                0x01DB_1314_1516_1718L));
    }

    @Test
    void decode_v6_rowsOf192Bytes() throws Exception {
        byte[] t = TcpTableBuilder.v6().row("::1", 50124, "::1", 7878, CLIENT, 77).row("fe80::1", 1, "fe80::2", 2, 7)
                .build();
        assertThat(t).hasSize(8 + 2 * 192);
        assertThat(TcpTable.decode(Win32.AF_INET6, t)).containsExactly(
                new TcpTable.Row(InetAddress.ofLiteral("::1"), 50124, InetAddress.ofLiteral("::1"), 7878, CLIENT, 77),
                new TcpTable.Row(InetAddress.ofLiteral("fe80::1"), 1, InetAddress.ofLiteral("fe80::2"), 2, 7,
                        TcpTableBuilder.CREATED));
    }

    @Test
    void decode_countBeyondBytes_malformed() {
        byte[] t = TcpTableBuilder.v4().row("127.0.0.1", 1, "127.0.0.1", 2, CLIENT).claim(2).build();
        assertThatThrownBy(() -> TcpTable.decode(Win32.AF_INET, t)).isInstanceOf(TcpTable.MalformedTableException.class);
        byte[] huge = TcpTableBuilder.v6().claim(-1).build(); // 2^32-1 rows
        assertThatThrownBy(() -> TcpTable.decode(Win32.AF_INET6, huge)).isInstanceOf(TcpTable.MalformedTableException.class);
        assertThatThrownBy(() -> TcpTable.decode(Win32.AF_INET, new byte[7])).isInstanceOf(TcpTable.MalformedTableException.class);
        // one row's bytes short of the 8-byte header plus the row: not a table
        byte[] one = TcpTableBuilder.v4().row("127.0.0.1", 1, "127.0.0.1", 2, CLIENT).build();
        assertThatThrownBy(() -> TcpTable.decode(Win32.AF_INET, java.util.Arrays.copyOf(one, one.length - 1)))
                .isInstanceOf(TcpTable.MalformedTableException.class);
    }

    // ---- the client's row ----

    @Test
    void ownerPid_clientOfSameUser_returnsClientPid() throws Exception {
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        assertThat(check.ownerPid(PEER, LOCAL)).isEqualTo(CLIENT);
        assertThat(fake.tcpTableBuffers).containsExactly(TcpPeerCheck.INITIAL_BYTES);
    }

    @Test
    void ownerPid_v6Peer_readsTheIpv6Table() throws Exception {
        fake.tcpTable(Win32.AF_INET, both(999).build());
        fake.tcpTable(Win32.AF_INET6, TcpTableBuilder.v6()
                .row("::1", 7878, "::1", 50124, HELPER)
                .row("::1", 50124, "::1", 7878, CLIENT).build());
        assertThat(check.ownerPid(PEER6, LOCAL6)).isEqualTo(CLIENT);
    }

    /** The CLI's use: asked with the helper's end as the peer, it names the listener's process. */
    @Test
    void ownerPid_askedFromTheClientSide_namesTheHelper_andRefusesAListenerOfAnotherUser() throws Exception {
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        assertThat(check.ownerPid(LOCAL, PEER)).isEqualTo(HELPER);
        fake.processes.get(HELPER).userSid = Sid.parse(OTHER_USER).binary(); // another user holds the port
        refused(LOCAL, PEER, "process " + HELPER + " runs as another user");
    }

    @Test
    void ownerPid_onlyTheHelpersMirrorRow_refused() {
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4().row("127.0.0.1", 7878, "127.0.0.1", 50123, HELPER).build());
        refused(PEER, LOCAL, "no connection in the TCP table has this client end");
    }

    @Test
    void ownerPid_noRow_refused() {
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4().row("127.0.0.1", 50999, "127.0.0.1", 7878, CLIENT).build());
        refused(PEER, LOCAL, "no connection in the TCP table has this client end");
    }

    @Test
    void ownerPid_otherListeningPort_refused() {
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4().row("127.0.0.1", 50123, "127.0.0.1", 7879, CLIENT).build());
        refused(PEER, LOCAL, "no connection in the TCP table has this client end");
    }

    @Test
    void ownerPid_twoRows_refused() {
        fake.tcpTable(Win32.AF_INET, both(CLIENT).row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT).build());
        refused(PEER, LOCAL, "2 connections in the TCP table have this client end");
    }

    @Test
    void ownerPid_systemPids_refused() {
        fake.tcpTable(Win32.AF_INET, both(0).build());
        refused(PEER, LOCAL, "owned by pid 0, a system process");
        fake.tcpTables.clear();
        fake.spawn(4, 3); // even if the fake answered for it, pid 4 is System
        fake.tcpTable(Win32.AF_INET, both(4).build());
        refused(PEER, LOCAL, "owned by pid 4, a system process");
    }

    @Test
    void ownerPid_otherUsersProcess_refused() {
        fake.processes.get(CLIENT).userSid = Sid.parse(OTHER_USER).binary();
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        refused(PEER, LOCAL, "process " + CLIENT + " runs as another user");
    }

    @Test
    void ownerPid_processGone_refused() {
        fake.processes.remove(CLIENT);
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        refused(PEER, LOCAL, "process " + CLIENT + " that owns it no longer exists");
    }

    // ---- the connection's creation time against the process's ----

    @Test
    void ownerPid_pidReused_processNewerThanConnection_refused() {
        fake.spawn(CLIENT, 501); // the pid now names a process created after the connection
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4()
                .row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT, 500).build());
        refused(PEER, LOCAL, "process " + CLIENT + " was created after the connection: its pid was reused");
    }

    @Test
    void ownerPid_pidReused_ipv6_refused() {
        fake.spawn(CLIENT, 501);
        fake.tcpTable(Win32.AF_INET6, TcpTableBuilder.v6()
                .row("::1", 7878, "::1", 50124, HELPER, 500)
                .row("::1", 50124, "::1", 7878, CLIENT, 500).build());
        refused(PEER6, LOCAL6, "process " + CLIENT + " was created after the connection: its pid was reused");
    }

    @Test
    void ownerPid_connectionTimestampZero_refused() {
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4()
                .row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT, 0).build());
        refused(PEER, LOCAL,
                "its connection has no creation time, so its owner pid " + CLIENT + " cannot be confirmed");
        assertThat(fake.processOpens).as("refused before the process is opened").isEmpty();
    }

    @Test
    void ownerPid_connectionTimestampZero_ipv6_refused() {
        fake.tcpTable(Win32.AF_INET6, TcpTableBuilder.v6().row("::1", 50124, "::1", 7878, CLIENT, 0).build());
        refused(PEER6, LOCAL6, "its connection has no creation time");
    }

    @Test
    void ownerPid_connectionTimestampNegative_refused() {
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4()
                .row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT, Long.MIN_VALUE).build());
        refused(PEER, LOCAL, "its connection has no creation time");
    }

    @Test
    void ownerPid_processCreationTimeZero_refused() {
        fake.spawn(CLIENT, 0);
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        refused(PEER, LOCAL, "process " + CLIENT + " has no creation time");
    }

    @Test
    void ownerPid_equalTimestamps_accepted() throws Exception {
        fake.spawn(CLIENT, 500); // created in the same tick as its socket
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4()
                .row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT, 500).build());
        assertThat(check.ownerPid(PEER, LOCAL)).isEqualTo(CLIENT);
        fake.tcpTable(Win32.AF_INET6, TcpTableBuilder.v6().row("::1", 50124, "::1", 7878, CLIENT, 500).build());
        assertThat(check.ownerPid(PEER6, LOCAL6)).isEqualTo(CLIENT);
    }

    @Test
    void ownerPid_processOlderThanConnection_accepted() throws Exception {
        fake.spawn(CLIENT, 499);
        fake.tcpTable(Win32.AF_INET, TcpTableBuilder.v4()
                .row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT, 500).build());
        assertThat(check.ownerPid(PEER, LOCAL)).isEqualTo(CLIENT);
    }

    /** The SID and the creation time come from one open of the process, not two. */
    @Test
    void ownerPid_sidAndCreationTimeFromOneOpen() throws Exception {
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        assertThat(check.ownerPid(PEER, LOCAL)).isEqualTo(CLIENT);
        assertThat(fake.processOpens).containsExactly(java.util.Map.entry(CLIENT, 1));
        assertThat(fake.openWaitables()).as("no handle left open").isZero();
        fake.tcpTable(Win32.AF_INET6, TcpTableBuilder.v6().row("::1", 50124, "::1", 7878, CLIENT).build());
        assertThat(check.ownerPid(PEER6, LOCAL6)).isEqualTo(CLIENT);
        assertThat(fake.processOpens).containsExactly(java.util.Map.entry(CLIENT, 2));
        assertThat(fake.openWaitables()).isZero();
    }

    @Test
    void ownerPid_userUnreadable_refused() {
        fake.failures.put("OpenProcessToken", pid -> pid.equals(String.valueOf(CLIENT)));
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        refused(PEER, LOCAL, "cannot read the user of process " + CLIENT);
    }

    @Test
    void ownerPid_malformedSid_refused() {
        byte[] sid = fake.user.binary();
        fake.processes.get(CLIENT).userSid = java.util.Arrays.copyOf(sid, sid.length + 4); // trailing bytes
        fake.tcpTable(Win32.AF_INET, both(CLIENT).build());
        refused(PEER, LOCAL, "the user SID of process " + CLIENT + " does not parse");
    }

    @Test
    void ownerPid_tableUnreadable_refused() {
        fake.failures.put("GetExtendedTcpTable", f -> true);
        refused(PEER, LOCAL, "cannot read the TCP table (GetExtendedTcpTable: Win32 error");
    }

    @Test
    void ownerPid_malformedTable_refused() {
        // more rows than the whole buffer can hold (what lies past the table in it is not zero)
        fake.tcpTable(Win32.AF_INET, both(CLIENT).claim(TcpPeerCheck.INITIAL_BYTES / TcpTable.ROW4 + 1).build());
        refused(PEER, LOCAL, "the TCP table does not decode");
    }

    @Test
    void ownerPid_familiesDiffer_refused() {
        refused(PEER, LOCAL6, "address family differs");
        assertThat(fake.tcpTableBuffers).isEmpty();
    }

    @Test
    void ownerPid_unresolvedAddress_refused() {
        assertThatThrownBy(() -> check.ownerPid(InetSocketAddress.createUnresolved("localhost", 1), LOCAL))
                .isInstanceOf(IOException.class).hasMessageContaining("addresses are unknown");
        assertThatThrownBy(() -> check.ownerPid(null, LOCAL))
                .isInstanceOf(IOException.class).hasMessageContaining("addresses are unknown");
    }

    // ---- the table grew ----

    @Test
    void ownerPid_tableGrewOnce_retriesWithBiggerBuffer() throws Exception {
        TcpTableBuilder big = TcpTableBuilder.v4().row("127.0.0.1", 7878, "127.0.0.1", 50123, HELPER);
        for (int i = 0; i < 1000; i++) { // 160 000 bytes: more than the first buffer
            big.row("127.0.0.1", 20000 + i, "127.0.0.1", 80, 999);
        }
        big.row("127.0.0.1", 50123, "127.0.0.1", 7878, CLIENT);
        byte[] t = big.build();
        assertThat(t.length).isGreaterThan(TcpPeerCheck.INITIAL_BYTES);
        fake.tcpTable(Win32.AF_INET, t);
        assertThat(check.ownerPid(PEER, LOCAL)).isEqualTo(CLIENT);
        assertThat(fake.tcpTableBuffers).hasSize(2);
        assertThat(fake.tcpTableBuffers.get(1)).isGreaterThanOrEqualTo(t.length);
    }

    @Test
    void ownerPid_tableKeepsGrowing_refusedAfterBoundedReads() {
        for (int i = 1; i <= TcpPeerCheck.MAX_ATTEMPTS + 2; i++) {
            // each answer needs more than the buffer the previous answer led to
            fake.tcpTable(Win32.AF_INET, new byte[TcpPeerCheck.INITIAL_BYTES * (1 << i) + 1]);
        }
        refused(PEER, LOCAL, "the TCP table kept growing (" + TcpPeerCheck.MAX_ATTEMPTS + " reads)");
        assertThat(fake.tcpTableBuffers).hasSize(TcpPeerCheck.MAX_ATTEMPTS);
    }

    @Test
    void ownerPid_tableTooLarge_refusedWithoutAllocating() {
        fake.tcpNeeded = TcpPeerCheck.MAX_TABLE_BYTES + 1;
        refused(PEER, LOCAL, "needs " + (TcpPeerCheck.MAX_TABLE_BYTES + 1) + " bytes");
        assertThat(fake.tcpTableBuffers).hasSize(1);
        fake.tcpTableBuffers.clear();
        fake.tcpNeeded = -1; // an unsigned DWORD beyond 2^31
        refused(PEER, LOCAL, "needs 4294967295 bytes");
        assertThat(fake.tcpTableBuffers).hasSize(1);
    }

    @Test
    void ownerPid_sizeAnswerNotBigger_stillGrowsTheBuffer() {
        fake.tcpNeeded = 100; // smaller than the buffer: the loop must not spin on the same size
        refused(PEER, LOCAL, "kept growing");
        assertThat(fake.tcpTableBuffers).containsExactly(TcpPeerCheck.INITIAL_BYTES, 2 * TcpPeerCheck.INITIAL_BYTES,
                4 * TcpPeerCheck.INITIAL_BYTES, 8 * TcpPeerCheck.INITIAL_BYTES);
    }

    // ---- the process watcher's same-user answer ----

    @Test
    void isOwnUser_sameOtherGoneUnknown() throws Exception {
        WindowsProcessWatcher w = new WindowsProcessWatcher(fake);
        assertThat(w.isOwnUser(CLIENT)).isTrue();
        fake.processes.get(CLIENT).userSid = Sid.parse(OTHER_USER).binary();
        assertThat(w.isOwnUser(CLIENT)).isFalse();
        assertThat(w.isOwnUser(77)).as("no such process").isFalse();
        assertThat(w.isOwnUser(0)).isFalse();
        fake.failures.put("OpenProcessToken", pid -> true);
        assertThatThrownBy(() -> w.isOwnUser(HELPER)).isInstanceOf(ProcessWatchException.class)
                .hasMessageContaining("cannot read the user of process " + HELPER);
        assertThat(fake.currentUserSidReads).as("the helper's own SID is read once, not per check").isEqualTo(1);
    }
}
