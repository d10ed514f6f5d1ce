package spice.authority.os.posix;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The owner (uid) of one end of a TCP connection, from Linux's {@code /proc/net/tcp} and
 * {@code /proc/net/tcp6}: the row whose {@code local_address} is that end and whose
 * {@code rem_address} is the other, and its {@code uid} column (the socket's owner, as the kernel
 * recorded it when the socket was created, translated into the reader's user namespace).
 *
 * <p><b>Guarantees.</b> Fails closed: an answer is given only when at least one row of a table
 * matches both ends exactly and every matching row of that table names the same uid; no row, rows
 * that disagree, or text that is not what the kernel writes is an {@link IOException}. The tables are those of the reader's
 * network namespace, which is the one of every loopback peer that can reach the helper.
 *
 * <p>RACE: the table is read after the connection was accepted; the peer's socket cannot change
 * owner, and while our end stays open its port pair cannot be reused by another socket, so a
 * matching row names the socket that connected (or its successor in {@code TIME_WAIT}, with
 * uid 0: refused).
 */
final class ProcNetTcp {
    private ProcNetTcp() {}

    /** The files read, IPv4 first. */
    static final Path[] TABLES = {Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6")};

    /**
     * The uid that owns the socket at {@code end} connected to {@code other}.
     *
     * @throws IOException when no table names that connection, the rows disagree, or a table
     *     cannot be read or parsed
     */
    static long ownerUid(InetSocketAddress end, InetSocketAddress other) throws IOException {
        // A connection's address pair is unique among the kernel's sockets, so the first table
        // that names it is the answer: an IPv4 client costs one read (about a millisecond here:
        // the kernel walks its whole hash table for each read, however few sockets there are).
        for (Path table : TABLES) {
            String text;
            try {
                text = new String(Files.readAllBytes(table), StandardCharsets.US_ASCII);
            } catch (java.nio.file.NoSuchFileException e) {
                continue; // no IPv6 in this kernel: that table has no rows
            }
            long uid = ownerUid(end, other, ByteOrder.nativeOrder(), text);
            if (uid >= 0) {
                return uid;
            }
        }
        throw new IOException("no TCP socket " + end + " connected to " + other + " in /proc/net/tcp or tcp6");
    }

    /**
     * The owner of the row naming {@code end} connected to {@code other} in one table's text, or
     * -1 when none does.
     *
     * @throws IOException when rows that name it disagree, or the text is not the kernel's
     */
    static long ownerUid(InetSocketAddress end, InetSocketAddress other, ByteOrder order, String table) throws IOException {
        if (end.getAddress() == null || other.getAddress() == null) {
            throw new IOException("TCP peer " + end + " has no resolved address");
        }
        long found = -1;
        String[] lines = table.split("\n");
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\\s+");
            if (f.length < 10) {
                throw new IOException("/proc/net/tcp row is malformed");
            }
            if (!matches(f[1], end, order) || !matches(f[2], other, order)) {
                continue;
            }
            long uid = unsignedDecimal(f[7]);
            if (found >= 0 && found != uid) {
                throw new IOException("TCP peer " + end + " is named by rows of different owners");
            }
            found = uid;
        }
        return found;
    }

    /** Whether {@code hex} ({@code ADDR:PORT} as the kernel prints it) is {@code want}. */
    static boolean matches(String hex, InetSocketAddress want, ByteOrder order) throws IOException {
        int colon = hex.indexOf(':');
        if (colon < 0 || hex.length() - colon - 1 != 4) {
            throw new IOException("/proc/net/tcp address is malformed");
        }
        int port;
        try {
            port = Integer.parseInt(hex.substring(colon + 1), 16);
        } catch (NumberFormatException e) {
            throw new IOException("/proc/net/tcp port is malformed");
        }
        if (port != want.getPort()) {
            return false;
        }
        return address(hex.substring(0, colon), order).equals(want.getAddress());
    }

    /**
     * The address of a table row: 8 or 32 hex digits, each 32-bit word printed as the machine
     * stores it (so little-endian machines print {@code 127.0.0.1} as {@code 0100007F}). An IPv4
     * address mapped into IPv6 reads as the IPv4 address, as Java names the peer of such a socket.
     */
    static InetAddress address(String hex, ByteOrder order) throws IOException {
        if (hex.length() != 8 && hex.length() != 32) {
            throw new IOException("/proc/net/tcp address is malformed");
        }
        byte[] b = new byte[hex.length() / 2];
        for (int word = 0; word < b.length / 4; word++) {
            long v;
            try {
                v = Long.parseLong(hex.substring(word * 8, word * 8 + 8), 16);
            } catch (NumberFormatException e) {
                throw new IOException("/proc/net/tcp address is malformed");
            }
            for (int k = 0; k < 4; k++) {
                int shift = order == ByteOrder.LITTLE_ENDIAN ? 8 * k : 8 * (3 - k);
                b[word * 4 + k] = (byte) (v >>> shift);
            }
        }
        try {
            return InetAddress.getByAddress(b); // SECURITY: a literal, no name lookup
        } catch (UnknownHostException e) {
            throw new IOException("/proc/net/tcp address is malformed");
        }
    }

    private static long unsignedDecimal(String s) throws IOException {
        if (s.isEmpty() || s.length() > 10 || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IOException("/proc/net/tcp uid is malformed");
        }
        long v = Long.parseLong(s);
        if (v > 0xFFFF_FFFFL) {
            throw new IOException("/proc/net/tcp uid is malformed");
        }
        return v;
    }
}
