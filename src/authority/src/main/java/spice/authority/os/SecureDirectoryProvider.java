package spice.authority.os;

/**
 * A platform implementation of the SPI, found with {@link java.util.ServiceLoader}. Use
 * {@link SecureDirectories#provider()} rather than loading providers directly.
 *
 * <p><b>Guarantees.</b> {@link #isSupported()} is cheap and side-effect free (it loads no
 * native code). {@link #open} either returns a directory that satisfies every guarantee of
 * {@link SecureDirectory} or throws and, in {@link OpenMode#VALIDATE_ONLY} mode or on any
 * refusal of an existing component, has changed nothing on disk.
 *
 * <p>The provider also hands out the platform's {@link ProcessWatcher} (one per JVM), so
 * that selecting the platform once selects both; there is no separate service to load.
 */
public interface SecureDirectoryProvider {

    /** A short platform name for logs, such as {@code linux-x86_64}. */
    String platform();

    /** Whether this provider can run on the current OS and architecture. */
    boolean isSupported();

    /**
     * Binds the authority directory.
     *
     * @param path an absolute, clean path (no empty, {@code .} or {@code ..} components, no
     *     trailing separator)
     * @param mode create missing components, or validate only
     * @return the owned directory; close it
     * @throws DirectoryRefusedException naming the offending component and category
     */
    SecureDirectory open(String path, OpenMode mode) throws DirectoryRefusedException;

    /**
     * The platform's default location for the authority directory of the current user, or
     * {@code null} when it cannot be determined (for example, no home directory).
     */
    String defaultDirectory();

    /**
     * The platform's process watcher, one instance per JVM. Obtain it once at start-up: a
     * platform without one fails there, not on the first session.
     *
     * <p>The default refuses, so that a provider without process watching cannot be mistaken
     * for one that has it (no silent no-op fallback).
     *
     * @throws UnsupportedOperationException if this platform cannot watch processes
     * @throws UnsupportedPlatformException if the provider does not support this platform
     */
    default ProcessWatcher processWatcher() {
        throw new UnsupportedOperationException("no process watcher on " + platform());
    }

    /**
     * The credentials of the peer of a connected Unix-domain socket, read from the socket itself
     * by the platform (macOS: {@code LOCAL_PEERCRED} and {@code LOCAL_PEERPID} at level
     * {@code SOL_LOCAL}). For a transport that does not expose them reliably; the descriptor
     * stays the caller's (it is neither closed nor kept).
     *
     * <p>The default refuses (no silent fallback): on Linux the application reads
     * {@code SO_PEERCRED} from its transport.
     *
     * @param socketFd a connected {@code AF_UNIX} stream socket
     * @throws java.io.IOException when the kernel does not answer them (not a connected Unix
     *     socket, an unknown credential layout): the peer is then unknown and must be refused
     * @throws UnsupportedOperationException if this platform does not read them here
     */
    default PeerCredentials peerCredentials(int socketFd) throws java.io.IOException {
        throw new UnsupportedOperationException("no socket peer credentials from " + platform());
    }

    /**
     * Whether {@link #tcpPeerPid} identifies the process at the other end of a loopback TCP
     * connection on this platform. Asked once at start-up: a helper serving TCP on a platform that
     * answers true checks every TCP connection's owner, and refuses the ones it cannot prove.
     */
    default boolean identifiesTcpPeers() {
        return false;
    }

    /**
     * Whether {@link #requireTcpPeerOfThisUser} answers on this platform (Linux: the owner column
     * of {@code /proc/net/tcp}). A helper serving TCP on such a platform refuses every connection
     * whose client end is not proven this user's before it reads a byte of it. Platforms that
     * identify the peer's process ({@link #identifiesTcpPeers()}) prove the user that way instead.
     */
    default boolean identifiesTcpPeerUsers() {
        return false;
    }

    /**
     * Proves that the client end {@code peer} of a loopback TCP connection to the helper's end
     * {@code local} is a socket of the helper's own (effective) user; returns nothing and throws
     * otherwise.
     *
     * <p>The default refuses (no silent fallback): only a platform whose
     * {@link #identifiesTcpPeerUsers()} is true answers.
     *
     * @throws java.io.IOException when the owner is not proven this user (no matching connection,
     *     another user, a table that cannot be read): the connection must be refused; the message
     *     names addresses and uids only
     * @throws UnsupportedOperationException if this platform does not identify TCP peers' users
     */
    default void requireTcpPeerOfThisUser(java.net.InetSocketAddress peer, java.net.InetSocketAddress local)
            throws java.io.IOException {
        throw new UnsupportedOperationException("no TCP peer users on " + platform());
    }

    /**
     * The pid of the process of this user that owns the client end of a loopback TCP connection
     * to the helper (Windows: the owning pid of the client's row in {@code GetExtendedTcpTable},
     * then the user SID of that process's token compared with the helper's).
     *
     * <p>The lookup is symmetric: it names the owner of the end {@code peer} of the connection
     * whose other end is {@code local}. A client (the CLI) asks it with the helper's end as
     * {@code peer} to prove the listener is this user's before it sends the bearer token.
     *
     * <p>The default refuses (no silent fallback): only a platform whose
     * {@link #identifiesTcpPeers()} is true answers.
     *
     * <p>RACE: the pid names the owner when the table was read; bind it to a process with
     * {@link ProcessWatcher#startTime} and {@link ProcessWatcher#liveness} before trusting it.
     *
     * @param peer the remote end of the accepted connection (the client's address and port)
     * @param local the helper's end of that connection
     * @return the pid of a process of this user
     * @throws java.io.IOException when the owner is not proven a process of this user (no
     *     matching connection or several, a system process, another user's process, a user that
     *     cannot be read): the peer must be refused; the message says which
     * @throws UnsupportedOperationException if this platform does not identify TCP peers
     */
    default long tcpPeerPid(java.net.InetSocketAddress peer, java.net.InetSocketAddress local) throws java.io.IOException {
        throw new UnsupportedOperationException("no TCP peer identification on " + platform());
    }
}
