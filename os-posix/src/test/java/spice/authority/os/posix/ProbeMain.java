package spice.authority.os.posix;

import java.nio.charset.StandardCharsets;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.os.StableLock;

/**
 * A tiny command-line driver of the SPI for tests that need another process: another uid
 * (setpriv), another umask, or a second lock holder. It goes through
 * {@link SecureDirectories#provider()}, so it also proves the ServiceLoader registration.
 *
 * <pre>
 * init PATH              create or validate           -> OK created=true|false
 * check PATH             validate only                -> OK
 * exercise PATH          init, write a record, lock   -> OK
 * read PATH NAME         validate only, read NAME     -> OK &lt;content&gt;
 * hold PATH NAME         lock NAME, print LOCKED NAME, hold until stdin closes
 * remount PATH DIR       open PATH and revalidate, bind-mount DIR over itself (needs a private
 *                        mount namespace), revalidate again -> OK, then OK or REFUSED ...
 * </pre>
 * A refusal prints {@code REFUSED <CATEGORY> <component>} and exits 1.
 */
public final class ProbeMain {

    private ProbeMain() {}

    public static void main(String[] args) throws Exception {
        String op = args[0];
        String path = args[1];
        try {
            switch (op) {
                case "init" -> {
                    try (SecureDirectory d = SecureDirectories.provider().open(path, OpenMode.CREATE_OR_VALIDATE)) {
                        System.out.println("OK created=" + d.createdLeaf());
                    }
                }
                case "check" -> {
                    try (SecureDirectory d = SecureDirectories.provider().open(path, OpenMode.VALIDATE_ONLY)) {
                        System.out.println(d.createdLeaf() ? "BUG created" : "OK");
                    }
                }
                case "exercise" -> {
                    try (SecureDirectory d = SecureDirectories.provider().open(path, OpenMode.CREATE_OR_VALIDATE)) {
                        d.revalidate();
                        d.writeAtomically("run-x.state", "x".getBytes(StandardCharsets.UTF_8));
                        d.lock("run-x.lock", LockMode.NON_BLOCKING).close();
                        System.out.println("OK");
                    }
                }
                case "read" -> {
                    try (SecureDirectory d = SecureDirectories.provider().open(path, OpenMode.VALIDATE_ONLY)) {
                        System.out.println("OK " + new String(d.read(args[2], 1024), StandardCharsets.UTF_8));
                    }
                }
                case "hold" -> {
                    try (SecureDirectory d = SecureDirectories.provider().open(path, OpenMode.CREATE_OR_VALIDATE);
                         StableLock l = d.lock(args[2], LockMode.NON_BLOCKING)) {
                        System.out.println("LOCKED " + l.name());
                        System.out.flush();
                        while (System.in.read() >= 0) {
                            // hold until the parent closes our stdin
                        }
                    }
                }
                case "remount" -> {
                    try (SecureDirectory d = SecureDirectories.provider().open(path, OpenMode.CREATE_OR_VALIDATE)) {
                        d.revalidate();
                        System.out.println("OK");
                        Process mount = new ProcessBuilder("mount", "--bind", args[2], args[2]).inheritIO().start();
                        if (mount.waitFor() != 0) {
                            throw new IllegalStateException("mount --bind failed");
                        }
                        d.revalidate();
                        System.out.println("OK");
                    }
                }
                default -> throw new IllegalArgumentException(op);
            }
        } catch (DirectoryRefusedException e) {
            System.out.println("REFUSED " + e.category() + " " + e.component());
            System.out.flush();
            System.exit(1);
        }
    }
}
