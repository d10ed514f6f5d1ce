package spice.authority.os.posix;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Decodes the records {@code getdents64} fills a buffer with ({@code struct linux_dirent64},
 * layout from {@link PosixPlatform}). Pure Java: nothing here touches {@code java.lang.foreign}.
 */
final class Dirents {

    private Dirents() {}

    /**
     * Appends the name of every record in {@code buf[0, length)} to {@code out}, except
     * {@code .} and {@code ..}. A name that is not valid UTF-8 is decoded with U+FFFD in place of
     * the bad bytes, so it can never equal a valid file name (those are ASCII).
     *
     * @throws IllegalArgumentException if a record's length does not fit the buffer or its name
     *     has no terminating NUL: the buffer is not what the kernel writes, and the listing must
     *     fail rather than come back short
     */
    static void decode(PosixPlatform p, byte[] buf, int length, List<String> out) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buf).order(java.nio.ByteOrder.nativeOrder());
        int pos = 0;
        while (pos < length) {
            if (length - pos < p.direntName + 1) {
                throw new IllegalArgumentException("truncated directory entry at offset " + pos);
            }
            int reclen = Short.toUnsignedInt(b.getShort(pos + p.direntReclen));
            if (reclen < p.direntName + 1 || reclen > length - pos) {
                throw new IllegalArgumentException("directory entry at offset " + pos + " has length " + reclen);
            }
            int nameStart = pos + p.direntName;
            int end = nameStart;
            while (end < pos + reclen && buf[end] != 0) {
                end++;
            }
            if (end == pos + reclen || end == nameStart) {
                throw new IllegalArgumentException("directory entry at offset " + pos + " has no terminated name");
            }
            String name = new String(buf, nameStart, end - nameStart, StandardCharsets.UTF_8);
            if (!name.equals(".") && !name.equals("..")) {
                out.add(name);
            }
            pos += reclen;
        }
    }
}
