package spice.authority.os;

/**
 * The process on the other end of a connected Unix-domain socket: its pid and its effective uid.
 * Linux records both at {@code connect(2)}; macOS records the uid then, and reports as pid the
 * last process that used the peer socket (see the provider's notes).
 *
 * <p><b>Guarantees.</b> Valid from birth: the pid is positive and the uid is an unsigned 32-bit
 * value. Nothing here says the process still runs: as for any pid, bind it to a process with
 * {@link ProcessWatcher#startTime} and {@link ProcessWatcher#liveness} before trusting it
 * (RACE: the peer may have exited and its pid been reused since it connected).
 *
 * @param pid the peer's pid (at connect time on Linux; the socket's last user on macOS)
 * @param uid the peer's effective uid at connect time
 */
public record PeerCredentials(long pid, long uid) {

    /** @throws IllegalArgumentException for a pid of zero or less, or a uid outside 0..2^32-1 */
    public PeerCredentials {
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("not a pid: " + pid);
        }
        if (uid < 0 || uid > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("not a uid: " + uid);
        }
    }
}
