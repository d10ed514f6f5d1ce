package spice.authority.host;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/**
 * The helper's bearer token file, read as the helper wrote it: a regular single-link file of this
 * user with mode 0600 in a 0700 directory of this user, never through a symbolic link. The token
 * is the content without surrounding white space, visible ASCII only.
 *
 * <p>Guarantees: SECURITY: no message names anything but the path and the rule broken; the read
 * buffer is zeroed. Pure Java: hosts do not link the authority's secure directory layer (the CLI
 * reads the file through it and uses {@link #token(Path, byte[])} for the content rule).
 */
public final class TokenFiles {
    /** Bound on the token file. */
    public static final int MAX_TOKEN_BYTES = 4096;

    private TokenFiles() {}

    /** Reads and checks {@code file}; see the class comment. */
    public static byte[] read(Path file) throws IOException {
        Path abs = file.toAbsolutePath().normalize();
        if (abs.getParent() == null || abs.getFileName() == null) {
            throw new IOException("token file " + file + ": not a file path");
        }
        PosixFileAttributes dir;
        PosixFileAttributes before;
        try {
            dir = Files.readAttributes(abs.getParent(), PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            before = Files.readAttributes(abs, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new HelperUnreachable("no token file " + file);
        }
        var own = Users.own();
        // SECURITY: another user's directory or file, a link, or loose rights: refused unread.
        if (!dir.isDirectory() || !dir.owner().equals(own) || !dir.permissions().equals(EnumSet.of(
                PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE))) {
            throw new IOException("token file " + file + ": refused: its directory must be yours with mode 0700");
        }
        Set<PosixFilePermission> rw = EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        if (!before.isRegularFile() || !before.owner().equals(own) || !before.permissions().equals(rw)
                || ((Number) Files.getAttribute(abs, "unix:nlink", LinkOption.NOFOLLOW_LINKS)).intValue() != 1) {
            throw new IOException("token file " + file + ": refused: must be your regular single-link file with mode 0600");
        }
        if (before.size() > MAX_TOKEN_BYTES) {
            throw new IOException("token file " + file + ": refused: larger than " + MAX_TOKEN_BYTES + " bytes");
        }
        byte[] buf = new byte[(int) before.size()];
        try {
            try (SeekableByteChannel ch = Files.newByteChannel(abs, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer b = ByteBuffer.wrap(buf);
                while (b.hasRemaining() && ch.read(b) >= 0) {
                    // fill
                }
                if (b.hasRemaining() || ch.read(ByteBuffer.allocate(1)) >= 0) {
                    throw new IOException("token file " + file + ": refused: it changed while being read");
                }
            }
            // RACE: the file could be replaced between the checks and the open; the same file key
            // (device and inode) afterwards proves the bytes came from the file that was checked.
            PosixFileAttributes after = Files.readAttributes(abs, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (before.fileKey() == null || !before.fileKey().equals(after.fileKey())) {
                throw new IOException("token file " + file + ": refused: it changed while being read");
            }
            return token(file, buf);
        } finally {
            Arrays.fill(buf, (byte) 0);
        }
    }

    /**
     * The token in a token file's {@code content}: without surrounding white space, visible ASCII
     * only. Does not modify {@code content}.
     */
    public static byte[] token(Path file, byte[] content) throws IOException {
        int from = 0;
        int to = content.length;
        while (from < to && isSpace(content[from])) {
            from++;
        }
        while (to > from && isSpace(content[to - 1])) {
            to--;
        }
        if (from == to) {
            throw new IOException("token file " + file + ": empty");
        }
        for (int i = from; i < to; i++) {
            if (content[i] <= ' ' || content[i] >= 0x7f) {
                throw new IOException("token file " + file + ": not a token (only visible ASCII characters are allowed)");
            }
        }
        return Arrays.copyOfRange(content, from, to);
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\r' || b == '\n';
    }
}
