package spice.authority.app.install;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.install.PlatformLayout.Step;
import spice.authority.os.FileNames;

/**
 * Plans and applies a per-user install or uninstall.
 *
 * <p>Guarantees: every check happens before the first write, so a refusal changes nothing; a file
 * or link is created, replaced or removed only when it is absent or listed in the manifest exactly
 * as it is on disk; a directory is removed only when the manifest says the install created it and it
 * is empty; nothing outside the manifest is ever removed (in particular not the authority
 * directory). A dry run writes nothing and runs no command.
 */
final class Installer {
    private static final Pattern VERSION = Pattern.compile("[0-9][0-9A-Za-z._+-]{0,63}");
    private static final String VERSION_OPTION = "java-options=-Djpackage.app-version=";

    private final Environment env;
    private final PlatformLayout layout;
    private final PrintWriter out;

    Installer(Environment env, PrintWriter out) throws InstallRefusedException {
        this.env = env;
        this.layout = PlatformLayout.of(env);
        this.out = out;
    }

    PlatformLayout layout() {
        return layout;
    }

    /** What one command does with the installer. */
    interface Action {
        int run(Installer installer) throws InstallRefusedException, IOException;
    }

    /**
     * The frame of {@code install} and {@code uninstall}: {@code --user} is required (usage error
     * otherwise), a refusal is one line on standard error and exit 1, everything else is the action's.
     */
    static int runCommand(String verb, boolean user, Environment environment, PrintWriter out, PrintWriter err,
                          Action action) throws IOException {
        if (!user) {
            err.println("spice-authority: only per-user installs exist: use '" + verb + " --user'");
            return ExitCodes.USAGE;
        }
        try {
            int code = action.run(new Installer(environment != null ? environment : Environment.current(), out));
            out.flush();
            return code;
        } catch (InstallRefusedException | IllegalArgumentException e) {
            out.flush();
            err.println("spice-authority: refused: " + e.getMessage());
            return ExitCodes.REFUSED;
        }
    }

    private Path manifestFile() {
        return layout.installRoot().resolve(Manifest.FILE_NAME);
    }

    // ---- install -----------------------------------------------------------------------------

    /** What one path should be after the install. */
    private sealed interface Want permits CopyOf, Content, LinkTo {}

    private record CopyOf(Path source, String sha256) implements Want {}

    private record Content(byte[] bytes, String sha256, String what) implements Want {}

    private record LinkTo(Path target) implements Want {}

    private enum Change { CREATE, REPLACE, UNCHANGED }

    /** Returns the exit code; throws when refused (nothing changed). */
    int install(Optional<Path> from, boolean dryRun) throws InstallRefusedException, IOException {
        Path source = from.or(env::runningImage).orElseThrow(() -> new InstallRefusedException(
                "not running from an app-image; pass --from DIR (build one with: ./mvnw -B -pl src/app -am package -DskipTests -Papp-image)"))
                .toAbsolutePath().normalize();
        Path srcLauncher = layout.launcherIn(source);
        if (!Files.isDirectory(source) || !Files.isRegularFile(srcLauncher) || !Files.isExecutable(srcLauncher)) {
            throw new InstallRefusedException(source + ": not an app-image (no launcher " + srcLauncher + ")");
        }
        String version = version(layout.cfgIn(source));
        Path imageDir = layout.imageDir(version);
        Path launcher = layout.launcherIn(imageDir);
        if (!source.equals(imageDir) && (source.startsWith(imageDir) || imageDir.startsWith(source))) {
            throw new InstallRefusedException(source + ": the app-image and the install location " + imageDir + " overlap");
        }
        Manifest old = Manifest.read(manifestFile());
        confine(old);

        // What should exist afterwards, in creation order.
        Map<Path, Want> want = new LinkedHashMap<>();
        Set<Path> treeDirs = new LinkedHashSet<>();
        boolean inPlace = source.equals(imageDir);
        try (Stream<Path> walk = Files.walk(source)) {
            for (Path p : walk.sorted().toList()) {
                Path dest = imageDir.resolve(source.relativize(p).toString());
                if (Files.isSymbolicLink(p)) {
                    want.put(dest, new LinkTo(Files.readSymbolicLink(p)));
                } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    treeDirs.add(dest);
                } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    want.put(dest, new CopyOf(p, Manifest.sha256(p)));
                } else {
                    throw new InstallRefusedException(p + ": neither a file, a directory nor a link");
                }
            }
        }
        for (PlatformLayout.GeneratedFile g : layout.registration(launcher)) {
            want.put(g.path(), new Content(g.content(), Manifest.sha256(g.content()), g.what()));
        }
        for (PlatformLayout.Link l : layout.links(launcher)) {
            want.put(l.path(), new LinkTo(l.target()));
        }
        // SECURITY: the manifest is one entry per line, tab-separated, and uninstall removes what it
        // lists: no control character (a carriage return, a newline, a tab) in any path or link target.
        for (Map.Entry<Path, Want> e : want.entrySet()) {
            if (hasControlCharacter(e.getKey().toString())) {
                throw new InstallRefusedException(FileNames.printable(e.getKey().toString()) + ": a control character in a path");
            }
            if (e.getValue() instanceof LinkTo l && hasControlCharacter(l.target().toString())) {
                throw new InstallRefusedException(FileNames.printable(e.getKey().toString()) + ": a control character in its link target");
            }
        }

        // Directories: the tree's, plus every missing ancestor of what is written. Ours are those
        // the install creates now or created before (listed in the manifest).
        Set<Path> candidates = new LinkedHashSet<>();
        candidates.add(layout.installRoot());
        candidates.addAll(treeDirs);
        for (Path p : want.keySet()) {
            for (Path a = p.getParent(); a != null; a = a.getParent()) {
                candidates.add(a);
            }
        }
        List<Path> mkdirs = new ArrayList<>();
        Set<Path> ourDirs = new LinkedHashSet<>();
        for (Path d : candidates.stream().sorted(Comparator.comparingInt(Path::getNameCount)).toList()) {
            boolean inOurTree = treeDirs.contains(d) || d.startsWith(layout.installRoot());
            if (!Files.exists(d, LinkOption.NOFOLLOW_LINKS)) {
                mkdirs.add(d);
                ourDirs.add(d);
            } else if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                if (old.entries().get(d) instanceof Manifest.Dir) {
                    ourDirs.add(d);
                }
            } else if (inOurTree || !Files.isDirectory(d)) {
                // A link to a directory is accepted only above the install (the user's own layout,
                // e.g. ~/.local -> /data/me/.local), never inside the tree install owns.
                throw new InstallRefusedException(d + ": exists and is not a directory; move it away and retry");
            }
        }

        // SECURITY: never replace what install did not write (absent from the manifest, or changed
        // since). All checks run before the first write.
        Map<Path, Change> changes = new LinkedHashMap<>();
        for (Map.Entry<Path, Want> e : want.entrySet()) {
            Path p = e.getKey();
            if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                changes.put(p, Change.CREATE);
                continue;
            }
            if (!old.matchesDisk(p)) {
                throw new InstallRefusedException(p + ": exists and was not written by 'spice-authority install' (or was changed since); move it away and retry");
            }
            boolean same = switch (e.getValue()) {
                case CopyOf c -> old.entries().get(p) instanceof Manifest.File f && f.sha256().size() == 1
                        && f.sha256().contains(c.sha256()) && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS);
                case Content c -> old.entries().get(p) instanceof Manifest.File f && f.sha256().size() == 1
                        && f.sha256().contains(c.sha256()) && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS);
                case LinkTo l -> Files.isSymbolicLink(p) && Files.readSymbolicLink(p).equals(l.target());
            };
            changes.put(p, same ? Change.UNCHANGED : Change.REPLACE);
        }
        List<Path> stale = new ArrayList<>();
        List<Path> staleDirs = new ArrayList<>();
        for (Map.Entry<Path, Manifest.Entry> e : old.entries().entrySet()) {
            Path p = e.getKey();
            if (want.containsKey(p) || ourDirs.contains(p)) {
                continue;
            }
            if (e.getValue() instanceof Manifest.Dir) {
                staleDirs.add(p);
            } else if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                if (!old.matchesDisk(p)) {
                    throw new InstallRefusedException(p + ": written by an earlier install but changed since; move it away and retry");
                }
                stale.add(p);
            }
        }
        staleDirs.sort(Comparator.comparingInt(Path::getNameCount).reversed());

        long unchanged = changes.values().stream().filter(c -> c == Change.UNCHANGED).count();
        boolean changed = !mkdirs.isEmpty() || unchanged != changes.size() || !stale.isEmpty()
                || staleDirs.stream().anyMatch(d -> Files.exists(d, LinkOption.NOFOLLOW_LINKS))
                || !version.equals(old.version());
        Manifest target = new Manifest(version, manifestEntries(ourDirs, want));

        if (dryRun) {
            out.println("install --user --dry-run: nothing is written and no command runs");
            out.println("source    " + source + " (version " + version + ")");
            out.println("install   " + imageDir);
            mkdirs.forEach(d -> out.println("mkdir     " + d));
            changes.forEach((p, c) -> {
                switch (c) {
                    case CREATE, REPLACE -> out.println(describe(c, p, want.get(p)));
                    case UNCHANGED -> { }
                }
            });
            stale.forEach(p -> out.println("remove    " + p));
            staleDirs.forEach(d -> out.println("rmdir     " + d + " (when empty)"));
            if (changed) {
                out.println("write     " + manifestFile() + " (install manifest)");
            }
            if (unchanged > 0) {
                out.println("unchanged " + unchanged + " files and links");
            }
            if (changed) {
                out.println("then, when the service manager is reachable (otherwise they are printed for you to run):");
                layout.activate(launcher).forEach(s -> out.println("run       " + s.display()));
            } else {
                out.println("spice-authority " + version + " is already installed in " + imageDir + "; nothing would change");
            }
            return 0;
        }

        if (!changed) {
            out.println("spice-authority " + version + " is already installed in " + imageDir + "; nothing changed");
            // An earlier install whose start failed (or a helper stopped since) is started again; a
            // running one is left alone, so a no-op install drops no host's session.
            if (layout.serviceManagerReachable() && layout.helperRunning().equals(Optional.of(false))) {
                out.println("the helper is not running; starting it");
                return runSteps(layout.activate(launcher), "to start the helper now and at every login, run:");
            }
            return 0;
        }

        // RACE: an interrupted install leaves files whose content is either the old or the new one;
        // the manifest written first lists both hashes, so the next install or uninstall still
        // recognises them as its own.
        for (Path d : mkdirs) {
            createDirectory(d);
            if (d.equals(layout.installRoot())) {
                writeManifest(union(old, target));
            }
        }
        if (!mkdirs.contains(layout.installRoot())) {
            writeManifest(union(old, target));
        }
        int written = 0;
        for (Map.Entry<Path, Change> e : changes.entrySet()) {
            if (e.getValue() == Change.UNCHANGED) {
                continue;
            }
            Path p = e.getKey();
            switch (want.get(p)) {
                case CopyOf c -> {
                    if (!inPlace) {
                        replace(p, tmp -> {
                            Files.copy(c.source(), tmp, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                            // SECURITY: what runs at every login is what was planned (and listed in the
                            // manifest): a source file changed since (say, in a directory others can
                            // write) is refused, and no one but the user may change the copy.
                            if (!Manifest.sha256(tmp).equals(c.sha256())) {
                                throw new IOException(c.source() + " changed while it was installed; nothing of it was "
                                        + "installed: run the install again");
                            }
                            dropOthersWrite(tmp);
                        });
                    }
                }
                case Content c -> replace(p, tmp -> {
                    Files.write(tmp, c.bytes(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                    setMode(tmp, "rw-r--r--");
                });
                case LinkTo l -> replace(p, tmp -> Files.createSymbolicLink(tmp, l.target()));
            }
            written++;
        }
        for (Path p : stale) {
            Files.deleteIfExists(p);
        }
        for (Path d : staleDirs) {
            removeIfEmpty(d);
        }
        writeManifest(target);
        out.println("installed spice-authority " + version + " in " + imageDir + " (" + written + " written, " + unchanged + " unchanged)");
        for (PlatformLayout.GeneratedFile g : layout.registration(launcher)) {
            out.println(g.what() + ": " + g.path());
        }
        for (PlatformLayout.Link l : layout.links(launcher)) {
            out.println("link: " + l.path() + " -> " + l.target());
        }
        return runSteps(layout.activate(launcher), "to start the helper now and at every login, run:");
    }

    private static String describe(Change c, Path p, Want w) {
        String verb = c == Change.CREATE ? "write     " : "replace   ";
        return switch (w) {
            case CopyOf x -> verb + p;
            case Content x -> verb + p + " (" + x.what() + ")";
            case LinkTo x -> (c == Change.CREATE ? "link      " : "relink    ") + p + " -> " + x.target();
        };
    }

    private static Map<Path, Manifest.Entry> manifestEntries(Set<Path> dirs, Map<Path, Want> want) {
        Map<Path, Manifest.Entry> m = new LinkedHashMap<>();
        dirs.stream().sorted(Comparator.comparingInt(Path::getNameCount)).forEach(d -> m.put(d, new Manifest.Dir()));
        want.forEach((p, w) -> m.put(p, switch (w) {
            case CopyOf c -> new Manifest.File(Set.of(c.sha256()));
            case Content c -> new Manifest.File(Set.of(c.sha256()));
            case LinkTo l -> new Manifest.Link(l.target());
        }));
        return m;
    }

    /** Old and new entries together; a file keeps both hashes (see the RACE note in install). */
    private static Manifest union(Manifest old, Manifest target) {
        Map<Path, Manifest.Entry> m = new LinkedHashMap<>(old.entries());
        target.entries().forEach((p, e) -> m.merge(p, e, (a, b) -> {
            if (a instanceof Manifest.File fa && b instanceof Manifest.File fb) {
                Set<String> both = new HashSet<>(fa.sha256());
                both.addAll(fb.sha256());
                return new Manifest.File(both);
            }
            return b;
        }));
        return new Manifest(target.version(), m);
    }

    private static String version(Path cfg) throws InstallRefusedException, IOException {
        if (!Files.isRegularFile(cfg, LinkOption.NOFOLLOW_LINKS)) {
            throw new InstallRefusedException(cfg + ": missing (not an app-image built by the app-image profile)");
        }
        for (String line : Files.readAllLines(cfg, StandardCharsets.UTF_8)) {
            if (line.startsWith(VERSION_OPTION)) {
                String v = line.substring(VERSION_OPTION.length()).strip();
                // SECURITY: the version names a directory; no separators, no "..".
                if (!VERSION.matcher(v).matches()) {
                    throw new InstallRefusedException(cfg + ": unusable app version '" + v + "'");
                }
                return v;
            }
        }
        throw new InstallRefusedException(cfg + ": no app version (" + VERSION_OPTION + "…)");
    }

    // ---- uninstall ---------------------------------------------------------------------------

    int uninstall(boolean dryRun) throws InstallRefusedException, IOException {
        Path mf = manifestFile();
        Manifest m = Manifest.read(mf);
        confine(m);
        if (m.entries().isEmpty()) {
            out.println("nothing to uninstall: no install manifest at " + mf);
            return 0;
        }
        List<Path> files = new ArrayList<>();
        List<Path> dirs = new ArrayList<>();
        for (Map.Entry<Path, Manifest.Entry> e : m.entries().entrySet()) {
            Path p = e.getKey();
            if (e.getValue() instanceof Manifest.Dir) {
                dirs.add(p);
            } else if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                // SECURITY: remove only what is still exactly as install wrote it.
                if (!m.matchesDisk(p)) {
                    throw new InstallRefusedException(p + ": changed since 'spice-authority install' wrote it; move it away and retry");
                }
                files.add(p);
            }
        }
        dirs.sort(Comparator.comparingInt(Path::getNameCount).reversed());
        if (dryRun) {
            out.println("uninstall --user --dry-run: nothing is removed and no command runs");
            out.println("first, when the service manager is reachable:");
            layout.deactivate().forEach(s -> out.println("run       " + s.display()));
            files.forEach(p -> out.println("remove    " + p));
            out.println("remove    " + mf + " (install manifest)");
            dirs.forEach(d -> out.println("rmdir     " + d + " (when empty)"));
            layout.afterRemoval().forEach(s -> out.println("run       " + s.display()));
            return 0;
        }
        int code = runSteps(layout.deactivate(), "the helper may still be registered; stop it with:");
        // SECURITY: the files of a helper that still runs are not removed from under it (its
        // registration gone, it would run on unseen until the next logout).
        if (layout.serviceManagerReachable()) {
            // Only a definite "stopped" lets the files go where the platform can be asked; an
            // answer that cannot be told (an unexpected state, a timeout) is not taken for one.
            Optional<Boolean> running = layout.helperRunning();
            if (running.orElse(layout.asksWhetherRunning())) {
                throw new InstallRefusedException("the helper " + (running.isPresent() ? "still runs" : "may still run")
                        + " after " + String.join("; ", layout.deactivate().stream().map(Step::display).toList())
                        + "; nothing was removed: stop it, then run uninstall again");
            }
        }
        for (Path p : files) {
            Files.deleteIfExists(p);
        }
        Files.deleteIfExists(mf);
        int removedDirs = 0;
        for (Path d : dirs) {
            if (removeIfEmpty(d)) {
                removedDirs++;
            } else if (Files.exists(d, LinkOption.NOFOLLOW_LINKS)) {
                out.println("kept: " + d + " (not empty: holds files install did not write)");
            }
        }
        out.println("uninstalled spice-authority " + m.version() + " (" + files.size() + " files and links, "
                + removedDirs + " directories removed; the authority directory is kept)");
        int after = runSteps(layout.afterRemoval(), "then run:");
        return code != 0 ? code : after;
    }

    // ---- helpers -----------------------------------------------------------------------------

    /**
     * SECURITY: install replaces, and uninstall removes, what the manifest lists; so every entry
     * must be a place install writes: below the install root, a registration file or link of this
     * layout, or (directories) one of their ancestors. A manifest naming anything else (edited, or
     * written under other HOME or XDG_* settings) is refused before anything changes.
     */
    private void confine(Manifest m) throws InstallRefusedException {
        Path root = layout.installRoot();
        Path anyLauncher = layout.launcherIn(root);
        Set<Path> places = new LinkedHashSet<>();
        layout.registration(anyLauncher).forEach(g -> places.add(g.path()));
        layout.links(anyLauncher).forEach(l -> places.add(l.path()));
        Set<Path> ancestors = new LinkedHashSet<>();
        for (Path p : places) {
            for (Path a = p.getParent(); a != null; a = a.getParent()) {
                ancestors.add(a);
            }
        }
        for (Path a = root.getParent(); a != null; a = a.getParent()) {
            ancestors.add(a);
        }
        for (Map.Entry<Path, Manifest.Entry> e : m.entries().entrySet()) {
            Path p = e.getKey();
            // (No ".." below the root: through a link it would lead anywhere.)
            boolean ours = places.contains(p) || (e.getValue() instanceof Manifest.Dir && ancestors.contains(p))
                    || (p.startsWith(root) && below(root, p));
            if (!ours) {
                throw new InstallRefusedException(FileNames.printable(p.toString()) + ": listed in the install manifest "
                        + manifestFile() + " but not a place install writes (with this HOME and XDG_* settings); "
                        + "nothing was changed");
            }
        }
    }

    private static boolean below(Path root, Path p) {
        for (Path c : root.relativize(p)) {
            if (c.toString().equals("..") || c.toString().equals(".")) {
                return false;
            }
        }
        return true;
    }

    /** Runs the steps when the service manager is reachable; otherwise prints them. */
    private int runSteps(List<Step> steps, String manualHeading) {
        if (steps.isEmpty()) {
            return 0;
        }
        if (!layout.serviceManagerReachable()) {
            out.println("the service manager is not reachable from here; " + manualHeading);
            steps.forEach(s -> out.println("  " + s.display()));
            return 0;
        }
        for (Step s : steps) {
            CommandRunner.Result r = env.commands().run(s.argv());
            if (r.exitCode() != 0 && !s.mayFail()) {
                out.println("spice-authority: command failed (exit " + r.exitCode() + "): " + s.display());
                return 1;
            }
            out.println("ran: " + s.display());
        }
        return 0;
    }

    @FunctionalInterface
    private interface TmpWriter {
        void write(Path tmp) throws IOException;
    }

    /** Writes beside {@code p} and renames over it, so {@code p} is never half-written. */
    private static void replace(Path p, TmpWriter w) throws IOException {
        Path tmp = p.resolveSibling("." + p.getFileName() + ".spice-install.tmp");
        Files.deleteIfExists(tmp);
        try {
            w.write(tmp);
            Files.move(tmp, p, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private void writeManifest(Manifest m) throws IOException {
        byte[] b = m.encode();
        replace(manifestFile(), tmp -> {
            Files.write(tmp, b, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            setMode(tmp, "rw-r--r--");
        });
    }

    private static boolean hasControlCharacter(String s) {
        return s.chars().anyMatch(c -> c < 0x20 || c == 0x7f);
    }

    /** {@code s} with control characters shown as {@code \\uXXXX}, for a one-line message. */

    /** SECURITY: the installed tree is the user's alone to change, whatever the source's modes. */
    private static void dropOthersWrite(Path p) throws IOException {
        if (p.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Set<java.nio.file.attribute.PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
            if (perms.remove(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
                    | perms.remove(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
                Files.setPosixFilePermissions(p, perms);
            }
        }
    }

    private static void createDirectory(Path d) throws IOException {
        try {
            Files.createDirectory(d);
            setMode(d, "rwxr-xr-x"); // SECURITY: whatever the umask, only the user writes in it
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                throw e;
            }
        }
    }

    private static boolean removeIfEmpty(Path d) throws IOException {
        try {
            return Files.deleteIfExists(d);
        } catch (DirectoryNotEmptyException e) {
            return false;
        }
    }

    private static void setMode(Path p, String mode) throws IOException {
        if (p.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
        }
    }
}
