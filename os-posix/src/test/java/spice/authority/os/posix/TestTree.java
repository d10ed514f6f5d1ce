package spice.authority.os.posix;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * A root-owned scratch tree ({@code 0755}, so other uids can traverse it) with helpers to build
 * hostile layouts and to prove that nothing on disk changed. {@link #close()} deletes it.
 */
final class TestTree implements AutoCloseable {

    static final int HELPER_UID = 4711;
    static final int ATTACKER_UID = 4712;

    final Path base;

    private TestTree(Path base) {
        this.base = base;
    }

    static TestTree create(Path parent) throws IOException {
        Path base = Files.createTempDirectory(parent, "spice-os-posix-");
        TestLibc.chmod(base, 0755);
        return new TestTree(base);
    }

    static TestTree create() throws IOException {
        return create(Path.of("/tmp"));
    }

    static boolean isRoot() {
        return Libc.geteuid() == 0;
    }

    Path resolve(String relative) {
        return base.resolve(relative);
    }

    /** Creates a directory (and parents) with an exact mode and owner. */
    Path dir(String relative, int mode, int uid) throws IOException {
        Path p = base.resolve(relative);
        Files.createDirectories(p);
        TestLibc.chmod(p, mode);
        TestLibc.lchown(p, uid, uid);
        return p;
    }

    Path dir(String relative, int mode) throws IOException {
        return dir(relative, mode, (int) Libc.geteuid());
    }

    Path file(String relative, byte[] content, int mode, int uid) throws IOException {
        Path p = base.resolve(relative);
        Files.write(p, content);
        TestLibc.chmod(p, mode);
        TestLibc.lchown(p, uid, uid);
        return p;
    }

    Path symlink(String relative, Path target, int uid) throws IOException {
        Path p = base.resolve(relative);
        Files.createSymbolicLink(p, target);
        TestLibc.lchown(p, uid, uid);
        return p;
    }

    /** Every object under the base with type, mode, owner, inode, links, times and a content digest. */
    Map<String, String> snapshot() throws IOException {
        Map<String, String> out = new TreeMap<>();
        out.put(".", describe(base));
        Files.walkFileTree(base, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                out.put(base.relativize(dir).toString(), describe(dir));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                out.put(base.relativize(file).toString(), describe(file));
                return FileVisitResult.CONTINUE;
            }
        });
        return out;
    }

    private static String describe(Path p) throws IOException {
        Map<String, Object> a = Files.readAttributes(p,
                "unix:mode,uid,gid,ino,nlink,size,lastModifiedTime,ctime", LinkOption.NOFOLLOW_LINKS);
        StringBuilder sb = new StringBuilder(new TreeMap<>(a).toString());
        if (Files.isSymbolicLink(p)) {
            sb.append(" -> ").append(Files.readSymbolicLink(p));
        } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
            try {
                sb.append(" sha256=").append(HexFormat.of().formatHex(
                        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        }
        return sb.toString();
    }

    @Override
    public void close() throws IOException {
        deleteTree(base);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                TestLibc.chmod(dir, 0700);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
