package spice.authority.os.windows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Decodes the buffer {@code GetFileInformationByHandleEx(FileFullDirectoryInfo)} fills: a chain
 * of {@code FILE_FULL_DIR_INFO} records linked by {@code NextEntryOffset}.
 *
 * <p><b>Guarantees.</b> Every record and name is checked against the filled length; a record
 * that does not fit, a non-advancing or misaligned offset, or an odd name length is an
 * {@link IllegalArgumentException} (the caller refuses the whole listing, never returns part of
 * it). {@code .} and {@code ..} are dropped. A name that is not valid UTF-16 comes back with
 * U+FFFD in place of the bad units, so it is never a valid file name.
 */
final class DirectoryEntries {

    /** {@code offsetof(FILE_FULL_DIR_INFO, FileNameLength)}. */
    static final int NAME_LENGTH_OFFSET = 60;
    /** {@code offsetof(FILE_FULL_DIR_INFO, FileName)}. */
    static final int NAME_OFFSET = 68;

    private DirectoryEntries() {}

    /** Appends the names in {@code buf[0, filled)} to {@code out}. */
    static void decode(byte[] buf, int filled, List<String> out) {
        if (filled < 0 || filled > buf.length) {
            throw new IllegalArgumentException("filled length out of range");
        }
        ByteBuffer b = ByteBuffer.wrap(buf, 0, filled).order(ByteOrder.LITTLE_ENDIAN);
        int pos = 0;
        while (true) {
            if (pos > filled - NAME_OFFSET) {
                throw new IllegalArgumentException("directory record at " + pos + " does not fit");
            }
            long next = Integer.toUnsignedLong(b.getInt(pos));
            long nameLen = Integer.toUnsignedLong(b.getInt(pos + NAME_LENGTH_OFFSET));
            if (nameLen == 0 || nameLen % 2 != 0 || nameLen > filled - pos - NAME_OFFSET) {
                throw new IllegalArgumentException("directory record at " + pos + " has a bad name length");
            }
            String name = utf16(buf, pos + NAME_OFFSET, (int) nameLen);
            if (!name.equals(".") && !name.equals("..")) {
                out.add(name);
            }
            if (next == 0) {
                return;
            }
            if (next % 8 != 0 || next < NAME_OFFSET + nameLen || next > filled - pos) {
                throw new IllegalArgumentException("directory record at " + pos + " has a bad next offset");
            }
            pos += (int) next;
        }
    }

    private static String utf16(byte[] buf, int off, int len) {
        // The String constructor replaces malformed UTF-16 (unpaired surrogates) with U+FFFD.
        return new String(buf, off, len, StandardCharsets.UTF_16LE);
    }
}
