package spice.authority.app.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import spice.authority.host.HelperUnreachable;
import spice.authority.host.TokenFiles;
import spice.authority.host.TokenReader;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;

/**
 * The CLI's bearer-token reader: the file is read through the secure directory layer, as the
 * helper wrote it: its directory must be the user's own 0700 directory and the file a regular
 * single-link file of the user, mode 0600, never followed through a symbolic link; another user's
 * file in that place is refused. The content rule is {@link TokenFiles#token(Path, byte[])}.
 */
final class CliTokenReader implements TokenReader {
    @Override
    public byte[] read(Path file) throws IOException {
        // SECURITY: a ".." is refused, not collapsed by text: the kernel would take "link/.." to the
        // parent of the link's target, so the text's answer could name another file than the path.
        for (Path c : file) {
            if (c.toString().equals("..")) {
                throw new IOException("token file " + file + ": refused: a '..' component (name the file without one)");
            }
        }
        Path abs = file.toAbsolutePath().normalize();
        if (abs.getParent() == null || abs.getFileName() == null) {
            throw new IOException("token file " + file + ": not a file path");
        }
        byte[] buf;
        try (SecureDirectory dir = SecureDirectories.provider().open(abs.getParent().toString(), OpenMode.VALIDATE_ONLY)) {
            buf = dir.read(abs.getFileName().toString(), TokenFiles.MAX_TOKEN_BYTES);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.MISSING) {
                throw new HelperUnreachable("no token file " + file);
            }
            throw new IOException("token file " + file + ": refused: " + e.getMessage());
        }
        try {
            return TokenFiles.token(file, buf);
        } finally {
            Arrays.fill(buf, (byte) 0);
        }
    }
}
