package spice.authority.app.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.PrintWriter;
import java.security.SecureRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import spice.authority.app.command.ExitCodes;
import spice.authority.core.AuthorityException;
import spice.authority.core.AuthorityIdentity;
import spice.authority.core.RunAuthority;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;
import spice.authority.os.UnsupportedPlatformException;

@Command(name = "authority",
        mixinStandardHelpOptions = true,
        description = {
            "Create or check the per-user authority directory.",
            "The directory holds the authority's identity (scope ID and HMAC key) and the",
            "signed run records. Every component of the path is walked without following",
            "symbolic links; ancestors must be owned by root or you and not writable by",
            "others unless sticky; the directory itself must be yours, mode 0700."
        },
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExamples:%n",
        footer = {
            "  spice-authority authority init",
            "  spice-authority authority check --json",
            "  spice-authority authority check /tmp/my-authority"
        },
        subcommands = {AuthorityCommand.Init.class, AuthorityCommand.Check.class})
public final class AuthorityCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Cli.subcommandRequired(spec);
    }

    /** Shared options and output of init and check. */
    abstract static class Base implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", arity = "0..1", paramLabel = "DIR",
                description = "Authority directory (absolute). Default: the platform's per-user state location, "
                        + "$XDG_STATE_HOME/spice-agent/authority or ~/.local/state/spice-agent/authority on Linux, "
                        + "~/Library/Application Support/spice-agent/authority on macOS.")
        String dir;

        @Option(names = "--json", description = "Machine-readable output.")
        boolean json;

        /** Finds the platform and the directory, then runs the subcommand on them. */
        @Override
        public final Integer call() throws IOException {
            SecureDirectoryProvider provider;
            try {
                provider = SecureDirectories.provider();
            } catch (UnsupportedPlatformException e) {
                return refuse(e.getMessage());
            }
            String path = resolveDir(provider);
            if (path == null) {
                return refuse("no default authority directory (no home directory); pass DIR");
            }
            return run(provider, path);
        }

        abstract int run(SecureDirectoryProvider provider, String path) throws IOException;

        String resolveDir(SecureDirectoryProvider provider) {
            if (dir != null) {
                return dir;
            }
            return provider.defaultDirectory();
        }

        int refuse(String what) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("spice-authority: refused: " + what);
            err.flush();
            return ExitCodes.REFUSED;
        }

        void report(String path, String state, AuthorityIdentityView id) throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                JsonGenerator g = new JsonFactory().createGenerator(out);
                g.useDefaultPrettyPrinter();
                g.writeStartObject();
                g.writeStringField("directory", path);
                g.writeStringField("state", state);
                g.writeStringField("identity", id.state());
                if (id.scopeIdHex() != null) {
                    g.writeStringField("scope_id", id.scopeIdHex());
                    g.writeStringField("key_generation", Long.toUnsignedString(id.generation()));
                }
                g.writeEndObject();
                g.flush();
                out.println();
            } else {
                out.println(path + ": OK " + state);
                if (id.scopeIdHex() != null) {
                    out.println("identity " + id.state() + ": scope " + id.scopeIdHex() + ", key generation "
                            + Long.toUnsignedString(id.generation()));
                } else {
                    out.println("identity " + id.state() + " (created by 'authority init' or the first 'serve')");
                }
            }
            out.flush();
        }
    }

    /** Public identity facts only: scope and generation; the key never leaves the library. */
    record AuthorityIdentityView(String state, String scopeIdHex, long generation) {}

    @Command(name = "init",
            mixinStandardHelpOptions = true,
            description = {
                "Create the authority directory if absent, then validate it.",
                "A new directory gets mode exactly 0700, whatever the umask, and the authority",
                "identity is created once. An existing directory is never chmodded or chowned;",
                "init creates identity.lock there if it is missing and removes the temporary",
                "files interrupted writes left behind, as the helper does when it starts."
            },
            footerHeading = "%nExit codes:%n",
            footer = {"  0  ready", "  1  refused: one line names the offending path component and why", "  2  usage error",
                "", "Example:", "  spice-authority authority init /tmp/demo-authority"})
    public static final class Init extends Base {
        @Override
        int run(SecureDirectoryProvider provider, String path) throws IOException {
            SecureDirectory d;
            try {
                d = provider.open(path, OpenMode.CREATE_OR_VALIDATE);
            } catch (DirectoryRefusedException e) {
                return refuse(e.getMessage());
            }
            // The directory is closed on every path: by the authority once it owns it, else here.
            RunAuthority authority = null;
            try {
                boolean created = d.createdLeaf();
                boolean hadIdentity = hasIdentity(d);
                authority = RunAuthority.open(d, new SecureRandom());
                report(path, created ? "created (mode 0700)" : "existing directory validated",
                        new AuthorityIdentityView(hadIdentity ? "existing" : "created", authority.scopeIdHex(),
                                authority.keyGeneration()));
                return ExitCodes.OK;
            } catch (AuthorityException e) {
                return refuse(e.getMessage());
            } finally {
                if (authority != null) {
                    authority.close();
                } else {
                    d.close();
                }
            }
        }

        /** Whether the identity file is present (any other refusal: RunAuthority.open reports it). */
        private static boolean hasIdentity(SecureDirectory d) {
            try {
                java.util.Arrays.fill(d.read(AuthorityIdentity.FILE_NAME, AuthorityIdentity.FILE_LENGTH), (byte) 0); // SECURITY: key bytes
                return true;
            } catch (DirectoryRefusedException e) {
                return e.category() != DirectoryRefusedException.Category.MISSING;
            }
        }
    }

    @Command(name = "check",
            mixinStandardHelpOptions = true,
            description = {
                "Validate the authority directory without changing anything.",
                "Checks the directory and its identity file; never creates, chmods or writes",
                "(not even a lock file)."
            },
            footerHeading = "%nExit codes:%n",
            footer = {"  0  valid", "  1  refused: one line names the offending path component and why", "  2  usage error",
                "", "Example:", "  spice-authority authority check /tmp/demo-authority"})
    public static final class Check extends Base {
        @Override
        int run(SecureDirectoryProvider provider, String path) throws IOException {
            try (SecureDirectory d = provider.open(path, OpenMode.VALIDATE_ONLY)) {
                AuthorityIdentityView view;
                try {
                    byte[] file = d.read(AuthorityIdentity.FILE_NAME, AuthorityIdentity.FILE_LENGTH);
                    try (AuthorityIdentity id = AuthorityIdentity.parse(file)) {
                        view = new AuthorityIdentityView("valid", id.scopeIdHex(), id.generation());
                    } finally {
                        java.util.Arrays.fill(file, (byte) 0);
                    }
                } catch (DirectoryRefusedException e) {
                    if (e.category() != DirectoryRefusedException.Category.MISSING) {
                        return refuse(e.getMessage());
                    }
                    view = new AuthorityIdentityView("absent", null, 0);
                } catch (IllegalArgumentException e) {
                    // The content breaks the file's format: not IDENTITY (a path that leads elsewhere).
                    return refuse(path + "/" + AuthorityIdentity.FILE_NAME + ": INVALID (" + e.getMessage() + ")");
                }
                report(path, "validated", view);
                return ExitCodes.OK;
            } catch (DirectoryRefusedException e) {
                return refuse(e.getMessage());
            }
        }
    }
}
