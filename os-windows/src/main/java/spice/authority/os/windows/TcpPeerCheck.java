package spice.authority.os.windows;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Proves that the client end of a loopback TCP connection to the helper belongs to a process of
 * the helper's own user: the owning pid and creation time of the client's row in
 * {@code GetExtendedTcpTable} ({@code TCP_TABLE_OWNER_MODULE_CONNECTIONS}), then the user SID and
 * creation time of that process, both read through one handle of it.
 *
 * <p>The client's row is the one whose <em>local</em> end is the peer's address and port (as the
 * helper sees the connection) and whose <em>remote</em> end is the helper's own address and port.
 * The helper's accepted socket has the mirror row; it is never matched.
 *
 * <p>Windows names the process that <em>created</em> the socket as its owner. That process may
 * hand the socket to another one and exit, and its pid may then be reused by an unrelated process.
 * A process created after the connection cannot have created it, so such a pid is refused as
 * reused; a connection whose creation time is unknown (0) is refused too.
 *
 * <p><b>Guarantees.</b> Fails closed: the peer is refused (an {@link IOException} naming why)
 * when no row or more than one row matches, when the owning pid is 0 (Idle) or 4 (System), when
 * the row's creation time is 0, when the process is gone, was created after the connection, runs
 * as another user, or its user cannot be read, and when the table cannot be read or keeps growing
 * beyond {@link #MAX_ATTEMPTS} reads or {@link #MAX_TABLE_BYTES}. Unknown is never "same user".
 *
 * <p>RACE: the pid is the owner at the time of the read. The client process may exit and its pid
 * be reused right after; the session layer binds a pid to a start time and re-checks the user
 * before trusting it, and the bearer token is still required on every request. A pid is unique
 * among live processes and the creator lived when it created the connection, so any other process
 * holding that pid is newer than the connection, which is refused. Not detected: the table names
 * the creator, not the process using the socket now; a socket handed to another process keeps its
 * creator's pid.
 */
final class TcpPeerCheck {

    /**
     * The first buffer (about 400 IPv4 or 340 IPv6 rows of the owner-module table, 160 and 192
     * bytes each); a busy machine needs more, and the loop grows it.
     */
    static final int INITIAL_BYTES = 64 * 1024;
    /**
     * A table larger than this is refused, failing closed (about 105 000 IPv4 or 87 000 IPv6
     * connections).
     */
    static final int MAX_TABLE_BYTES = 16 * 1024 * 1024;
    /** Reads of a table that grew between the size query and the copy. */
    static final int MAX_ATTEMPTS = 4;

    private final WindowsCalls calls;
    private final ProcessUsers users;

    TcpPeerCheck(WindowsCalls calls, Sid user) {
        this.calls = calls;
        this.users = new ProcessUsers(calls, user);
    }

    /**
     * @param peer the remote end of the accepted connection (the client's address and port)
     * @param local the helper's end of it (its listening address and port)
     * @return the pid of the client, a live process of this user when read
     * @throws IOException naming the peer and why it is refused
     */
    long ownerPid(InetSocketAddress peer, InetSocketAddress local) throws IOException {
        if (peer == null || local == null || peer.getAddress() == null || local.getAddress() == null) {
            throw refused(peer, "the connection's addresses are unknown");
        }
        boolean v4 = peer.getAddress() instanceof Inet4Address;
        if (v4 != local.getAddress() instanceof Inet4Address) {
            throw refused(peer, "its address family differs from the helper's end");
        }
        int family = v4 ? Win32.AF_INET : Win32.AF_INET6;
        List<TcpTable.Row> rows = read(peer, family);
        TcpTable.Row match = null;
        int matches = 0;
        for (TcpTable.Row r : rows) {
            if (r.localPort() == peer.getPort() && r.remotePort() == local.getPort()
                    && r.localAddress().equals(peer.getAddress()) && r.remoteAddress().equals(local.getAddress())) {
                match = r;
                matches++;
            }
        }
        // SECURITY: exactly one row names the client's end; none or several means the owner is unknown.
        if (matches == 0) {
            throw refused(peer, "no connection in the TCP table has this client end");
        }
        if (matches > 1) {
            throw refused(peer, matches + " connections in the TCP table have this client end");
        }
        long pid = match.pid();
        if (pid == 0 || pid == 4) {
            throw refused(peer, "its connection is owned by pid " + pid + ", a system process");
        }
        // SECURITY: without the connection's creation time a reused pid cannot be told apart.
        if (match.created() <= 0) { // 0: not recorded; negative (top bit set): not a time
            throw refused(peer, "its connection has no creation time, so its owner pid " + pid
                    + " cannot be confirmed");
        }
        ProcessUsers.Identity who;
        try {
            who = users.identify(pid);
        } catch (ProcessUsers.UnknownOwnerException e) {
            throw refused(peer, e.getMessage());
        }
        return switch (who.owner()) {
            case GONE -> throw refused(peer, "process " + pid + " that owns it no longer exists");
            case OTHER -> throw refused(peer, "process " + pid + " runs as another user");
            case SAME -> {
                if (who.creationTime() <= 0) {
                    throw refused(peer, "process " + pid + " has no creation time");
                }
                // SECURITY: the process that created the socket existed before it; a process
                // created later holds a reused pid. Both are FILETIME ticks; equal is allowed.
                // RACE: both are wall-clock times; a clock stepped back between the connection and
                // a pid's reuse lets the reused pid pass. This is defence in depth: the process is
                // still one of this user's, and the bearer token is still required.
                if (who.creationTime() > match.created()) {
                    throw refused(peer, "process " + pid + " was created after the connection: its pid was reused");
                }
                yield pid;
            }
        };
    }

    /** The table of {@code family}, re-read with a bigger buffer while it does not fit (bounded). */
    private List<TcpTable.Row> read(InetSocketAddress peer, int family) throws IOException {
        byte[] buf = new byte[INITIAL_BYTES];
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            int needed;
            try {
                needed = calls.getExtendedTcpTable(family, buf);
            } catch (WindowsException e) {
                throw refused(peer, "cannot read the TCP table (" + e.getMessage() + ")");
            }
            if (needed == 0) {
                try {
                    return TcpTable.decode(family, buf);
                } catch (TcpTable.MalformedTableException e) {
                    throw refused(peer, "the TCP table does not decode (" + e.getMessage() + ")");
                }
            }
            if (Integer.toUnsignedLong(needed) > MAX_TABLE_BYTES) {
                throw refused(peer, "the TCP table needs " + Integer.toUnsignedLong(needed) + " bytes, more than "
                        + MAX_TABLE_BYTES);
            }
            // RACE: connections open between the size answer and the next copy; leave room for them,
            // and never retry with a buffer that is not bigger.
            long next = Math.max(needed + needed / 4L, buf.length * 2L);
            buf = new byte[(int) Math.min(next, MAX_TABLE_BYTES)];
        }
        throw refused(peer, "the TCP table kept growing (" + MAX_ATTEMPTS + " reads)");
    }

    private static IOException refused(InetSocketAddress peer, String why) {
        return new IOException("TCP peer " + (peer == null ? "<unknown>" : peer.getAddress() == null ? peer.toString()
                : peer.getAddress().getHostAddress() + ":" + peer.getPort()) + " refused: " + why);
    }
}
