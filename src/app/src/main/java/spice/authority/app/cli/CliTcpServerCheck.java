package spice.authority.app.cli;

import java.io.IOException;
import spice.authority.host.TcpServerCheck;
import spice.authority.os.SecureDirectoryProvider;

/**
 * The CLI's proof that a loopback TCP listener is the helper of this user, before the bearer token
 * is sent: where the platform identifies TCP peers (Windows: the owning pid of the listener's row
 * in the TCP table, then its token user), the helper's end of the connection must belong to a
 * process of this user. Elsewhere (Linux, macOS) the token alone, as before.
 *
 * <p>SECURITY: fails closed: a refusal, a failure or an odd answer of the platform refuses the
 * call before anything is written.
 */
final class CliTcpServerCheck {
    private CliTcpServerCheck() {}

    static TcpServerCheck of(SecureDirectoryProvider platform) {
        if (!platform.identifiesTcpPeers()) {
            return TcpServerCheck.none();
        }
        return (server, local) -> {
            long pid;
            try {
                // The platform's check is symmetric: it names the owner of the other end of the
                // connection, here the helper's (its row: local = server, remote = our end).
                pid = platform.tcpPeerPid(server, local);
            } catch (IOException | RuntimeException e) {
                throw new IOException("the process listening on " + server.getAddress().getHostAddress() + ":"
                        + server.getPort() + " is not proven to be one of this user's; the token was not sent ("
                        + e.getMessage() + ")");
            }
            if (pid <= 0) {
                throw new IOException("the process listening on " + server.getAddress().getHostAddress() + ":"
                        + server.getPort() + " is not proven to be one of this user's (pid " + pid + "); the token was not sent");
            }
        };
    }
}
