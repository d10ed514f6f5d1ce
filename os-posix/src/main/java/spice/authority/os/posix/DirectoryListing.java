package spice.authority.os.posix;

import static spice.authority.os.DirectoryRefusedException.Category.IO;
import static spice.authority.os.posix.PathWalk.io;

import java.util.ArrayList;
import java.util.List;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.UnsupportedPlatformException;

/**
 * Lists a retained directory descriptor, through the {@link Syscalls} it was given, the way its
 * platform table says: {@code getdents64} on Linux, {@code fdopendir}/{@code readdir_r}/{@code
 * closedir} on macOS. Pure Java over the door, so the macOS path runs in the Linux suite against
 * a simulated kernel.
 *
 * <p><b>Guarantees.</b> The retained descriptor is never read, moved or closed: the listing
 * opens {@code "."} relative to it, which names the retained directory whatever its path names
 * now, and reads that fresh descriptor, which it always releases. A fresh open file description
 * has its own offset, so concurrent listings cannot disturb each other or the retained
 * descriptor (a {@code dup} would share the offset, and a stream over the retained descriptor
 * itself would close it in {@code closedir}). The result is complete or a refusal of category
 * {@code IO}: never a partial list. Names are sorted, without {@code .} and {@code ..}.
 *
 * <p>Why {@code readdir_r} on macOS: {@code getdirentries64} is a private libSystem symbol
 * ({@code __getdirentries64}), and Apple supports only the public library interface, not system
 * call numbers; {@code readdir(3)} reports its failure and its end the same way (NULL) and
 * differs only in an {@code errno} the caller must zero first, which a downcall cannot do
 * reliably. {@code readdir_r} returns the error number itself, and its {@code struct dirent}
 * holds a name of {@code MAXPATHLEN} bytes, so the overflow that deprecated it elsewhere cannot
 * happen.
 *
 * <p>NOT RUN HERE: the macOS path has run only against the simulated kernel of the Linux tests.
 */
final class DirectoryListing {

    /** Bytes asked of one {@code getdents64}: a few hundred entries of this directory's names. */
    private static final int DIRENT_CHUNK = 32 * 1024;

    private final Syscalls sys;
    private final PosixPlatform p;
    /** The macOS layout; null on Linux. */
    private final DarwinLayout darwin;

    DirectoryListing(Syscalls sys, PosixPlatform p) {
        this.sys = sys;
        this.p = p;
        this.darwin = !p.hasGetdents64() && p.hasDirectoryStream() ? DarwinLayout.of(p) : null;
    }

    /**
     * The names in the directory {@code dirfd} refers to.
     *
     * @param shown the directory's printable path, for refusals
     * @throws DirectoryRefusedException of category {@code IO} when reading fails at any point
     * @throws UnsupportedPlatformException on a platform with neither way of listing
     */
    List<String> list(int dirfd, String shown) throws DirectoryRefusedException {
        if (p.hasGetdents64()) {
            return viaGetdents64(dirfd, shown);
        }
        if (darwin != null) {
            return viaDirectoryStream(dirfd, shown);
        }
        throw new UnsupportedPlatformException("listing a directory is not implemented on " + p.name);
    }

    private List<String> viaGetdents64(int dirfd, String shown) throws DirectoryRefusedException {
        int fd;
        try {
            // SECURITY: "." relative to the retained descriptor is the retained directory,
            // whatever its path names now; a fresh open file description has its own offset,
            // so concurrent listings cannot disturb each other or the retained descriptor.
            fd = sys.openat(dirfd, ".", p.O_RDONLY | p.O_DIRECTORY | p.O_CLOEXEC, 0);
        } catch (PosixException e) {
            throw io(shown, e);
        }
        try {
            List<String> names = new ArrayList<>();
            byte[] buf = new byte[DIRENT_CHUNK];
            while (true) {
                int n = sys.getdents64(fd, buf);
                if (n == 0) {
                    break;
                }
                Dirents.decode(p, buf, n, names);
            }
            names.sort(null);
            return List.copyOf(names);
        } catch (PosixException e) {
            throw io(shown, e); // SECURITY: never a partial list
        } catch (IllegalArgumentException e) {
            throw unreadable(shown, e);
        } finally {
            sys.closeQuietly(fd);
        }
    }

    private List<String> viaDirectoryStream(int dirfd, String shown) throws DirectoryRefusedException {
        int fd;
        try {
            // SECURITY: as for getdents64; O_NOFOLLOW as everywhere else on macOS ("." is never a
            // link, so it changes nothing but documents that nothing is followed).
            fd = sys.openat(dirfd, ".", p.O_RDONLY | p.O_DIRECTORY | p.O_NOFOLLOW | p.O_CLOEXEC, 0);
        } catch (PosixException e) {
            throw io(shown, e);
        }
        long dir;
        try {
            dir = sys.fdopendir(fd);
        } catch (PosixException e) {
            sys.closeQuietly(fd); // fdopendir failed: the descriptor is still ours
            throw io(shown, e);
        } catch (Throwable t) {
            // SECURITY: anything else (Libc's AssertionError for a downcall that failed before
            // the call: a class that failed to initialise, native memory exhausted) made no
            // stream either, so the descriptor is still ours, as in the getdents64 path, whose
            // finally releases it on every throw. Left open, each list() would leak one.
            try {
                sys.closeQuietly(fd);
            } catch (Throwable c) {
                t.addSuppressed(c);
            }
            throw t;
        }
        // SECURITY: from here on the stream owns fd. closedir closes it; a close(fd) as well would
        // close a number another thread may have been given in between.
        try {
            List<String> names = new ArrayList<>();
            byte[] entry = new byte[darwin.direntSize];
            while (sys.readdir_r(dir, entry)) {
                String name = darwin.decodeDirent(entry);
                if (!name.equals(".") && !name.equals("..")) {
                    names.add(name);
                }
            }
            names.sort(null);
            return List.copyOf(names);
        } catch (PosixException e) {
            throw io(shown, e); // SECURITY: never a partial list
        } catch (IllegalArgumentException e) {
            throw unreadable(shown, e);
        } finally {
            try {
                sys.closedir(dir);
            } catch (PosixException ignored) {
                // SECURITY: as for close: the stream and its descriptor are released anyway.
            }
        }
    }

    /** A listing whose entries do not decode: refused whole, never a partial list. */
    private static DirectoryRefusedException unreadable(String shown, IllegalArgumentException e) {
        return new DirectoryRefusedException(IO, shown, "unreadable directory listing: " + e.getMessage());
    }
}
