package spice.authority.app.install;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an install wrote: every directory it created, every file with its SHA-256, every symbolic
 * link with its target. Kept in the install root as {@value #FILE_NAME}; install refuses to replace,
 * and uninstall to remove, anything that is not listed here exactly as it is on disk.
 *
 * <p>Text, one entry a line, fields separated by TAB: {@code dir PATH}, {@code file HASH[,HASH] PATH},
 * {@code link PATH TARGET}. A file may list two hashes while an install is being applied (the old and
 * the new content), so that an interrupted install is still recognised as ours.
 */
record Manifest(String version, Map<Path, Entry> entries) {
    static final String FILE_NAME = "install-manifest";
    private static final String HEADER = "# spice-authority install manifest v1";

    Manifest {
        entries = Collections.unmodifiableMap(new LinkedHashMap<>(entries));
    }

    sealed interface Entry permits Dir, File, Link {}

    /** A directory the install created (removed by uninstall only when empty). */
    record Dir() implements Entry {}

    /** A regular file and the hashes its content may have. */
    record File(Set<String> sha256) implements Entry {
        File {
            sha256 = Set.copyOf(sha256);
        }
    }

    /** A symbolic link and its target. */
    record Link(Path target) implements Entry {}

    static Manifest empty() {
        return new Manifest("", Map.of());
    }

    /** Reads the manifest; absent: empty. A malformed manifest is refused (nothing is trusted). */
    static Manifest read(Path file) throws InstallRefusedException, IOException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return empty();
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new InstallRefusedException(file + ": the install manifest is not a regular file");
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.getFirst().equals(HEADER)) {
            throw new InstallRefusedException(file + ": not a spice-authority install manifest");
        }
        String version = "";
        Map<Path, Entry> entries = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split("\t", -1);
            Entry e;
            Path path;
            switch (f[0]) {
                case "version" -> {
                    requireFields(file, f, 2);
                    version = f[1];
                    continue;
                }
                case "dir" -> {
                    requireFields(file, f, 2);
                    path = Path.of(f[1]);
                    e = new Dir();
                }
                case "file" -> {
                    requireFields(file, f, 3);
                    path = Path.of(f[2]);
                    e = new File(Set.of(f[1].split(",")));
                }
                case "link" -> {
                    requireFields(file, f, 3);
                    path = Path.of(f[1]);
                    e = new Link(Path.of(f[2]));
                }
                default -> throw new InstallRefusedException(file + ": malformed install manifest");
            }
            if (!path.isAbsolute()) {
                throw new InstallRefusedException(file + ": malformed install manifest (relative path)");
            }
            entries.put(path, e);
        }
        return new Manifest(version, entries);
    }

    private static void requireFields(Path file, String[] f, int n) throws InstallRefusedException {
        if (f.length != n) {
            throw new InstallRefusedException(file + ": malformed install manifest");
        }
    }

    byte[] encode() {
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        b.append("version\t").append(version).append('\n');
        entries.forEach((path, e) -> {
            switch (e) {
                case Dir d -> b.append("dir\t").append(path);
                case File f -> b.append("file\t").append(String.join(",", f.sha256().stream().sorted().toList())).append('\t').append(path);
                case Link l -> b.append("link\t").append(path).append('\t').append(l.target());
            }
            b.append('\n');
        });
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Whether {@code path} is on disk exactly as this manifest lists it (a file: one of its hashes). */
    boolean matchesDisk(Path path) throws IOException {
        Entry e = entries.get(path);
        return switch (e) {
            case null -> false;
            case Dir d -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS);
            case File f -> Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) && f.sha256().contains(sha256(path));
            case Link l -> Files.isSymbolicLink(path) && Files.readSymbolicLink(path).equals(l.target());
        };
    }

    static String sha256(Path file) throws IOException {
        MessageDigest md = sha256();
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    static String sha256(byte[] content) {
        return HexFormat.of().formatHex(sha256().digest(content));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
