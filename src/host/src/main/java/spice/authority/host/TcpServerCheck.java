package spice.authority.host;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * Proves, before the bearer token is sent, that the process listening at the other end of a
 * loopback TCP connection runs as this user: the TCP counterpart of the Unix socket's peer
 * credentials check. A loopback port is not private: another local user may hold the helper's
 * port (while the helper is down, or before it starts) and would otherwise receive the token and
 * answer in the helper's name.
 *
 * <p>Where the platform cannot tell (Linux, macOS: a TCP listener's owner is not readable there)
 * the check is {@link #none()} and the token alone protects the helper. The CLI passes the
 * platform's check on Windows, where the TCP table names the owning process.
 */
@FunctionalInterface
public interface TcpServerCheck {

    /**
     * @param server the helper's end of the connected socket (its address and port)
     * @param local this client's end of it
     * @throws IOException when the listener is not proven to be a process of this user: nothing is
     *     sent, the message says why (it never holds the token)
     */
    void verify(InetSocketAddress server, InetSocketAddress local) throws IOException;

    /** No check: the bearer token alone (the default; Linux and macOS). */
    static TcpServerCheck none() {
        return (server, local) -> {};
    }
}
