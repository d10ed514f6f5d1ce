package spice.authority.os;

/**
 * The identity of a file-system object: device and inode number on POSIX (volume serial and the
 * 128-bit file id of {@code FILE_ID_INFO} on Windows). Each value is an unsigned 64-bit quantity
 * carried in a {@code long}; the file id is {@code inodeHigh:inode}, and {@code inodeHigh} is 0
 * on POSIX and for NTFS's 64-bit file reference numbers (ReFS may use all 128 bits).
 *
 * <p><b>Guarantees.</b> Two identities are equal only when all three values are equal: a file id
 * is never folded or truncated, so two ReFS files whose ids differ only in the high half are
 * different identities.
 *
 * @param device the device ({@code st_dev}; the volume serial number on Windows)
 * @param inode the inode number ({@code st_ino}; the low 64 bits of the file id on Windows)
 * @param inodeHigh the high 64 bits of a 128-bit file id; 0 on POSIX
 */
public record FileIdentity(long device, long inode, long inodeHigh) {

    /** A 64-bit file id (POSIX, NTFS): {@code inodeHigh} is 0. */
    public FileIdentity(long device, long inode) {
        this(device, inode, 0);
    }

    /** {@code device:inode} in unsigned decimal; a 128-bit id as {@code device:0x} and 32 hex digits. */
    @Override
    public String toString() {
        if (inodeHigh == 0) {
            return Long.toUnsignedString(device) + ":" + Long.toUnsignedString(inode);
        }
        return Long.toUnsignedString(device) + ":0x" + String.format("%016x%016x", inodeHigh, inode);
    }
}
