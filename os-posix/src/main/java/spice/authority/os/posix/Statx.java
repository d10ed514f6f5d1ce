package spice.authority.os.posix;

/**
 * What Linux {@code statx(2)} reports of a file: its status, and the ID of the mount it was
 * reached through ({@code stx_mnt_id}), or -1 when the kernel did not report one (before 5.8).
 * A mount ID stays allocated while any descriptor into that mount is open, so two equal IDs seen
 * while such a descriptor is held name the same mount.
 */
record Statx(FileStat stat, long mountId) {

    /** Whether {@code other} is the same file reached through the same mount (and both IDs are known). */
    boolean sameFileAndMount(Statx other) {
        return mountId >= 0 && mountId == other.mountId && stat.identity().equals(other.stat.identity());
    }
}
