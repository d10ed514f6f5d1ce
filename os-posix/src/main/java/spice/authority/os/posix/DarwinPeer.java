package spice.authority.os.posix;

import java.io.IOException;
import java.util.Objects;
import spice.authority.os.PeerCredentials;

/**
 * The peer credentials of a connected Unix-domain socket on macOS: the effective uid from
 * {@code getsockopt(fd, SOL_LOCAL, LOCAL_PEERCRED)} ({@code struct xucred}) and the pid from
 * {@code getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID)}. Only the uid is recorded at
 * {@code connect(2)}; XNU answers the pid with the last process that used the peer socket (a child
 * that inherited it, a process it was handed to), so callers read it again per request.
 *
 * <p><b>Guarantees.</b> Fails closed: a failing call, a short answer, a {@code cr_version} other
 * than {@code XUCRED_VERSION} or a pid that is not positive is an {@link IOException} with a
 * one-line message, never credentials. The level is {@code SOL_LOCAL} (0), not
 * {@code SOL_SOCKET}: at {@code SOL_SOCKET} the option number 1 is {@code SO_DEBUG}, whose
 * 4-byte answer would leave {@code cr_uid} unwritten.
 *
 * <p>NOT RUN HERE: only the decoding has run (on Linux, over bytes built by the tests);
 * {@code DarwinPeerMacTest} reads a real socket on macOS.
 */
final class DarwinPeer {

    private final DarwinSyscalls sys;
    private final DarwinLayout layout;

    DarwinPeer(DarwinSyscalls sys, DarwinLayout layout) {
        this.sys = Objects.requireNonNull(sys, "sys");
        this.layout = Objects.requireNonNull(layout, "layout");
    }

    /**
     * The peer of {@code fd}.
     *
     * @throws IOException when the kernel's answer is missing or not understood
     */
    PeerCredentials read(int fd) throws IOException {
        byte[] cred = new byte[layout.xucredSize];
        int credLen;
        byte[] pid = new byte[layout.sizeofPidT];
        int pidLen;
        try {
            credLen = sys.getsockopt(fd, layout.SOL_LOCAL, layout.LOCAL_PEERCRED, cred);
            pidLen = sys.getsockopt(fd, layout.SOL_LOCAL, layout.LOCAL_PEERPID, pid);
        } catch (PosixException e) {
            throw new IOException("peer credentials of socket " + fd + ": " + e.getMessage());
        }
        DarwinLayout.XuCred x = layout.decodeXucred(cred, credLen);
        if (x == null) {
            throw new IOException("peer credentials of socket " + fd + ": LOCAL_PEERCRED answered " + credLen
                    + " bytes that are not a struct xucred of version " + layout.XUCRED_VERSION);
        }
        long p = layout.decodePid(pid, pidLen);
        if (p == DarwinLayout.MALFORMED) {
            throw new IOException("peer credentials of socket " + fd + ": LOCAL_PEERPID answered no pid");
        }
        return new PeerCredentials(p, x.uid());
    }
}
