package spice.authority.os.windows;

import spice.authority.os.FileIdentity;

/**
 * Turns a {@code FILE_ID_INFO} (volume serial number and 128-bit file id) into the SPI's
 * {@link FileIdentity}.
 *
 * <p><b>Guarantees.</b> The mapping is injective on everything it accepts: the volume serial is
 * the device and the whole 128-bit id is kept (low half the inode, high half
 * {@link FileIdentity#inodeHigh()}; NTFS ids are 64-bit file reference numbers with a zero high
 * half, ReFS may use all 128 bits), never folded. A zero id means the file system cannot prove
 * identity and is refused ({@link DaclRule#ID_ZERO}), as is {@code FILE_INVALID_FILE_ID}
 * ({@link DaclRule#ID_INVALID}).
 */
final class FileIds {

    /** {@code sizeof(FILE_ID_INFO)}. */
    static final int FILE_ID_INFO_SIZE = 24;

    private FileIds() {}

    /**
     * @param info the 24 bytes of a {@code FILE_ID_INFO}, little-endian: {@code ULONGLONG
     *     VolumeSerialNumber} then {@code FILE_ID_128 FileId}
     */
    static FileIdentity identity(byte[] info) throws RuleViolation {
        if (info.length != FILE_ID_INFO_SIZE) {
            throw new IllegalArgumentException("FILE_ID_INFO is 24 bytes, not " + info.length);
        }
        long serial = le64(info, 0);
        long low = le64(info, 8);
        long high = le64(info, 16);
        if (low == 0 && high == 0) {
            throw new RuleViolation(DaclRule.ID_ZERO, "the file system reports file id 0: identity cannot be proven");
        }
        if (high == -1L && low == -1L || high == 0 && low == -1L) {
            throw new RuleViolation(DaclRule.ID_INVALID, "the file system reports FILE_INVALID_FILE_ID");
        }
        return new FileIdentity(serial, low, high);
    }

    static long le64(byte[] b, int off) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[off + i] & 0xffL);
        }
        return v;
    }
}
