package spice.authority.app.runtime;

/**
 * Who may talk to the helper, as {@code serve} decided it once at start.
 *
 * @param effectiveUid the helper's uid, compared with a Unix-socket peer's and with a host's real
 *     uid; -1 on Windows, where a process has a user SID and no Unix socket is served
 * @param tcpPeersIdentified on TCP, every connection's owning process must be proven to be one of
 *     this user's (the platform identifies TCP peers: Windows); false: the bearer token alone
 */
public record PeerPolicy(long effectiveUid, boolean tcpPeersIdentified) {

    /** A policy whose TCP connections are checked by the bearer token alone. */
    public static PeerPolicy tokenOnly(long effectiveUid) {
        return new PeerPolicy(effectiveUid, false);
    }
}
