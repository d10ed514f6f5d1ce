package spice.authority.os.posix;

import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;
import spice.authority.os.UnsupportedPlatformException;

/**
 * The {@link SecureDirectoryProvider} for Linux and macOS on x86_64 and aarch64, registered
 * with {@link java.util.ServiceLoader}.
 *
 * <p><b>Guarantees.</b> {@link #isSupported()} consults only the platform table and loads no
 * native code. {@link #open} refuses to run on a platform without a table. The directory it
 * returns follows wire-format d.4-d.7 with the stricter rules of ARCHITECTURE.md.
 */
public final class PosixSecureDirectoryProvider implements SecureDirectoryProvider {

    /** For {@link java.util.ServiceLoader}. */
    public PosixSecureDirectoryProvider() {}

    @Override
    public String platform() {
        return PosixPlatform.current().map(p -> p.name)
                .orElseGet(() -> "unsupported " + PosixPlatform.key(System.getProperty("os.name"),
                        System.getProperty("os.arch")) + " (os-posix)");
    }

    @Override
    public boolean isSupported() {
        return PosixPlatform.current().isPresent();
    }

    @Override
    public SecureDirectory open(String path, OpenMode mode) throws DirectoryRefusedException {
        if (!isSupported()) {
            throw new UnsupportedPlatformException("os-posix does not support " + platform());
        }
        return PosixSecureDirectory.open(path, java.util.Objects.requireNonNull(mode, "mode"), Syscalls.LIBC);
    }

    /**
     * Linux: the pidfd watcher ({@code PidfdProcessWatcher}, Linux 5.3+); macOS: the kqueue
     * {@code EVFILT_PROC} watcher ({@code KqueueProcessWatcher}, start times from
     * {@code proc_pidinfo}). One per JVM.
     *
     * <p>NOT RUN HERE: the macOS watcher has run only against a simulated kernel on Linux.
     */
    @Override
    public spice.authority.os.ProcessWatcher processWatcher() {
        PosixPlatform p = PosixPlatform.current().orElseThrow(
                () -> new UnsupportedPlatformException("os-posix does not support " + platform()));
        if (p.hasPidfd()) {
            return PidfdProcessWatcher.instance();
        }
        if (p.hasKqueue()) {
            return KqueueProcessWatcher.instance();
        }
        throw new UnsupportedOperationException("process watching is not implemented on " + p.name);
    }

    /**
     * macOS: {@code LOCAL_PEERCRED} and {@code LOCAL_PEERPID} at level {@code SOL_LOCAL}
     * ({@code DarwinPeer}). Linux refuses: the application reads {@code SO_PEERCRED} from its
     * epoll transport.
     *
     * <p>NOT RUN HERE: the macOS path has run only over bytes built by the Linux tests.
     */
    @Override
    public spice.authority.os.PeerCredentials peerCredentials(int socketFd) throws java.io.IOException {
        PosixPlatform p = PosixPlatform.current().orElseThrow(
                () -> new UnsupportedPlatformException("os-posix does not support " + platform()));
        if (!p.hasKqueue()) {
            throw new UnsupportedOperationException("peer credentials on " + p.name + " come from the transport (SO_PEERCRED)");
        }
        return new DarwinPeer(DarwinSyscalls.LIBC, DarwinLayout.of(p)).read(socketFd);
    }

    /** Linux: the owner column of {@code /proc/net/tcp} and {@code tcp6} ({@code ProcNetTcp}). macOS: no. */
    @Override
    public boolean identifiesTcpPeerUsers() {
        return PosixPlatform.current().map(p -> p.name.startsWith("linux-")).orElse(false);
    }

    /**
     * Linux: the row of the client's socket (local address {@code peer}, remote address
     * {@code local}) must name the helper's effective uid.
     *
     * <p>SECURITY: the check runs before the helper reads a byte of the connection, so a process of
     * another user can neither fetch the endpoint proof nor hold a connection (the TCP listener is
     * reachable by every local user; the token file is not).
     */
    @Override
    public void requireTcpPeerOfThisUser(java.net.InetSocketAddress peer, java.net.InetSocketAddress local)
            throws java.io.IOException {
        if (!identifiesTcpPeerUsers()) {
            throw new UnsupportedOperationException("no TCP peer users on " + platform());
        }
        long uid = ProcNetTcp.ownerUid(peer, local);
        long mine = Syscalls.LIBC.geteuid();
        if (uid != mine) {
            throw new java.io.IOException("TCP peer " + peer + " belongs to uid " + uid + ", not this user (uid " + mine + ")");
        }
    }

    /**
     * Linux: {@code $XDG_STATE_HOME} (when absolute) or {@code $HOME/.local/state}; macOS:
     * {@code $HOME/Library/Application Support}; then {@code spice-agent/authority}.
     */
    @Override
    public String defaultDirectory() {
        String os = PosixPlatform.current().map(p -> p.name).orElse("");
        return defaultDirectory(os, System.getenv("XDG_STATE_HOME"), System.getenv("HOME"));
    }

    static String defaultDirectory(String platform, String xdgStateHome, String home) {
        String base;
        if (platform.startsWith("linux-") && xdgStateHome != null && xdgStateHome.startsWith("/")) {
            base = stripTrailingSlashes(xdgStateHome);
        } else if (home == null || !home.startsWith("/")) {
            return null;
        } else if (platform.startsWith("macos-")) {
            base = stripTrailingSlashes(home) + "/Library/Application Support";
        } else if (platform.startsWith("linux-")) {
            base = stripTrailingSlashes(home) + "/.local/state";
        } else {
            return null;
        }
        return base + "/spice-agent/authority";
    }

    private static String stripTrailingSlashes(String s) {
        int end = s.length();
        while (end > 1 && s.charAt(end - 1) == '/') {
            end--;
        }
        return end == 1 ? "" : s.substring(0, end);
    }
}
