package spice.authority.os;

/**
 * The identity of a file-system object: device and inode number on POSIX (volume serial
 * and file index on Windows). Both values are unsigned 64-bit quantities carried in a
 * {@code long}.
 *
 * @param device the device ({@code st_dev})
 * @param inode the inode number ({@code st_ino})
 */
public record FileIdentity(long device, long inode) {

    @Override
    public String toString() {
        return Long.toUnsignedString(device) + ":" + Long.toUnsignedString(inode);
    }
}
