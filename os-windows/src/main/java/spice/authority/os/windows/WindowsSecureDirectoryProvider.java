package spice.authority.os.windows;

import java.util.Locale;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.FileNames;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;
import spice.authority.os.UnsupportedPlatformException;

/**
 * The {@link SecureDirectoryProvider} for 64-bit Windows (x86_64 and arm64), registered with
 * {@link java.util.ServiceLoader}.
 *
 * <p><b>Guarantees.</b> {@link #isSupported()} reads only system properties and loads no native
 * code, so on Linux and macOS this provider is inert. {@link #open} refuses to run elsewhere. The
 * directory it returns follows wire-format d.7 and d.8 with the trusted principals of RFC 0007.
 *
 * <p>NOT RUN: {@link #open}, {@link #processWatcher()} and {@link #tcpPeerPid} have never run on
 * Windows (README.md).
 */
public final class WindowsSecureDirectoryProvider implements SecureDirectoryProvider {

    /** For {@link java.util.ServiceLoader}. */
    public WindowsSecureDirectoryProvider() {}

    @Override
    public String platform() {
        return platform(System.getProperty("os.name"), System.getProperty("os.arch"));
    }

    static String platform(String osName, String osArch) {
        String arch = arch(osArch);
        return isWindows(osName) && arch != null ? "windows-" + arch
                : "unsupported " + osName + "/" + osArch + " (os-windows)";
    }

    @Override
    public boolean isSupported() {
        return supported(System.getProperty("os.name"), System.getProperty("os.arch"));
    }

    static boolean supported(String osName, String osArch) {
        return isWindows(osName) && arch(osArch) != null;
    }

    private static boolean isWindows(String osName) {
        return osName != null && osName.startsWith("Windows");
    }

    /** The 64-bit architectures whose structure layouts StructureLayoutTest checks; null for others. */
    private static String arch(String osArch) {
        String a = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
        return switch (a) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> null;
        };
    }

    @Override
    public SecureDirectory open(String path, OpenMode mode) throws DirectoryRefusedException {
        requireSupported();
        WindowsCalls calls = WindowsCalls.jna();
        Sid user;
        try {
            user = currentUser(calls);
        } catch (WindowsException | MalformedDescriptorException e) {
            throw new DirectoryRefusedException(DirectoryRefusedException.Category.IO, path == null || path.isEmpty() ? "<empty>" : FileNames.printable(path),
                    "cannot read the current user's SID: " + e.getMessage());
        }
        return WindowsSecureDirectory.open(path, java.util.Objects.requireNonNull(mode, "mode"), calls, user);
    }

    /** {@code %LOCALAPPDATA%\spice-agent\authority}. */
    @Override
    public String defaultDirectory() {
        return WindowsPath.defaultDirectory(System.getenv("LOCALAPPDATA"));
    }

    @Override
    public ProcessWatcher processWatcher() {
        requireSupported();
        return WindowsProcessWatcher.instance();
    }

    /** True on Windows: {@link #tcpPeerPid} reads the owner of a connection from the TCP table. */
    @Override
    public boolean identifiesTcpPeers() {
        return isSupported();
    }

    /**
     * The owning pid of the client's row in {@code GetExtendedTcpTable}, if that process runs as
     * this user ({@link TcpPeerCheck}).
     */
    @Override
    public long tcpPeerPid(java.net.InetSocketAddress peer, java.net.InetSocketAddress local) throws java.io.IOException {
        requireSupported();
        WindowsCalls calls = WindowsCalls.jna();
        Sid user;
        try {
            user = currentUser(calls);
        } catch (WindowsException | MalformedDescriptorException e) {
            throw new java.io.IOException("TCP peer refused: cannot read the helper's own user SID (" + e.getMessage() + ")");
        }
        return new TcpPeerCheck(calls, user).ownerPid(peer, local);
    }

    private void requireSupported() {
        if (!isSupported()) {
            throw new UnsupportedPlatformException("os-windows does not support " + platform());
        }
    }

    /** The SID of the user this process runs as (its token's user). */
    private static Sid currentUser(WindowsCalls calls) throws WindowsException, MalformedDescriptorException {
        return Sid.fromBinary(calls.currentUserSid());
    }
}
