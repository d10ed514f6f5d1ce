package spice.authority.app.serve;

import io.quarkus.runtime.Quarkus;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import spice.authority.app.command.EndpointDefaults;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.command.LoopbackEndpoint;
import spice.authority.app.runtime.BearerToken;
import spice.authority.app.runtime.Endpoint;
import spice.authority.app.runtime.PeerPolicy;
import spice.authority.core.AuthorityException;
import spice.authority.app.runtime.FormatsSetting;
import spice.authority.core.RunAuthority;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.LockMode;
import spice.authority.os.OpenMode;
import spice.authority.os.ProcessWatcher;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectory;
import spice.authority.os.SecureDirectoryProvider;
import spice.authority.os.StableLock;
import spice.authority.os.UnsupportedPlatformException;

@Command(name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Run the helper: serve the HTTP API for the hosts of this user.",
            "Opens the authority directory, takes the single-instance lock, then serves the",
            "API on a Unix socket in a 0700 endpoint directory (default), or on loopback TCP",
            "with a bearer token. Prints one line 'listening on unix:PATH' (or 'listening on",
            "http://HOST:PORT') once it accepts requests. SIGTERM drains and exits 0."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  stopped cleanly",
            "  1  refused to start (the line says which path component or lock and why)",
            "  2  usage error",
            "",
            "Examples:",
            "  spice-authority serve",
            "  spice-authority serve --authority-dir /tmp/demo/authority --socket /tmp/demo/endpoint/authority.sock",
            "  spice-authority serve --listen 127.0.0.1:7878 --token-file /tmp/demo/endpoint/token"
        })
public final class ServeCommand implements Callable<Integer> {
    /** Name of the single-instance lock in the authority directory. */
    public static final String INSTANCE_LOCK = "helper.lock";
    /** Name of the endpoint lock in the endpoint directory. */
    public static final String ENDPOINT_LOCK = "endpoint.lock";

    @Spec
    CommandSpec spec;

    /** Started by the Quarkus runner jar, which alone can boot the HTTP service. */
    private final boolean quarkusRunner;

    /** As built by the plain entry point: {@code serve} refuses to start. */
    public ServeCommand() {
        this(false);
    }

    /** @param quarkusRunner started by the Quarkus runner jar (only then does {@code serve} start) */
    public ServeCommand(boolean quarkusRunner) {
        this.quarkusRunner = quarkusRunner;
    }

    @Option(names = "--authority-dir", paramLabel = "DIR",
            description = "Authority directory (absolute). Default: the per-user state location (see 'authority init --help').")
    String authorityDir;

    @Option(names = "--socket", paramLabel = "PATH",
            description = "Unix socket path; its directory must be yours with mode 0700 (created if absent). "
                    + "Default: $XDG_RUNTIME_DIR/spice-agent/authority.sock, else /tmp/spice-agent-<uid>/authority.sock "
                    + "(/private/tmp/... on macOS, where /tmp is a symbolic link).")
    String socket;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Serve on loopback TCP instead (127.0.0.1 or [::1] only); requires a bearer token. "
                    + "Windows serves only TCP, by default on 127.0.0.1:47878.")
    String listen;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "With --listen: where to write the random bearer token (mode 0600; its directory 0700). "
                    + "Default: the endpoint directory's 'token' (Windows: %%LOCALAPPDATA%%\\spice-agent\\endpoint\\token).")
    String tokenFile;

    @Option(names = "--formats", paramLabel = "VERSIONS",
            description = "Take only these snapshot formats, comma-separated (v1alpha2, v1alpha3; default: every format "
                    + "the shipped format history accepts, both). Also spice.authority.formats / SPICE_AUTHORITY_FORMATS.")
    String formats;

    @Override
    public Integer call() throws IOException {
        return serve(spec.commandLine().getErr());
    }

    /**
     * The fast path of the Quarkus runner for {@code serve}: when the arguments are only the four
     * options (each as {@code --opt VALUE} or {@code --opt=VALUE}), they are read here without
     * building the picocli command tree, which costs a noticeable share of the helper's start-up.
     * Anything else (help, a typo, another command) returns null and goes through picocli. Only
     * the Quarkus runner calls it.
     */
    public static ServeCommand fastArgs(String[] args) {
        if (args.length == 0 || !args[0].equals("serve")) {
            return null;
        }
        java.util.Map<String, String> given = new java.util.HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            String name = a;
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                name = a.substring(0, eq);
                value = a.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            }
            // Unknown, valueless or repeated options: picocli says what is wrong.
            if (!FAST_OPTIONS.contains(name) || value == null || value.isEmpty() || value.startsWith("-")
                    || given.putIfAbsent(name, value) != null) {
                return null;
            }
        }
        ServeCommand c = new ServeCommand(true);
        c.authorityDir = given.get("--authority-dir");
        c.socket = given.get("--socket");
        c.listen = given.get("--listen");
        c.tokenFile = given.get("--token-file");
        return c;
    }

    private static final java.util.Set<String> FAST_OPTIONS =
            java.util.Set.of("--authority-dir", "--socket", "--listen", "--token-file");

    /** Runs {@code serve}; returns an exit code, or {@link ExitCodes#SERVED} once Quarkus runs. */
    public int serve(PrintWriter err) throws IOException {
        if (!quarkusRunner) {
            err.println("spice-authority: 'serve' runs from the Quarkus runner: use ./spice-authority serve "
                    + "(or java -jar src/app/target/quarkus-app/quarkus-run.jar serve)");
            return ExitCodes.USAGE;
        }
        if (socket != null && listen != null) {
            err.println("spice-authority: --socket and --listen exclude each other");
            return ExitCodes.USAGE;
        }
        if (tokenFile != null && listen == null && EndpointDefaults.unixSocketByDefault(System.getProperty("os.name"))) {
            err.println("spice-authority: --token-file goes with --listen");
            return ExitCodes.USAGE;
        }
        Prepared prepared;
        try {
            prepared = prepare();
            try {
                // The listener reaches Quarkus's configuration from the handed-over endpoint
                // (runtime/ServeListenerConfig), not through system properties.
                prepared.handOver();
            } catch (RuntimeException e) {
                prepared.release(); // the locks, the authority and the endpoint file
                throw e;
            }
        } catch (Refusal r) {
            err.println("spice-authority: refused to start: " + r.getMessage());
            err.flush();
            return ExitCodes.REFUSED;
        }
        Runnable cleanUp = prepared.cleanUpOnce();
        Quarkus.run(ServeApplication.class, (code, failure) -> {
            if (failure != null) {
                System.err.println("spice-authority: the helper failed to start: " + failure.getMessage());
            }
            cleanUp.run();
            System.exit(failure != null ? ExitCodes.REFUSED : code);
        });
        return ExitCodes.SERVED;
    }

    /** A start-up refusal with a one-line, secret-free reason. */
    static final class Refusal extends Exception {
        private static final long serialVersionUID = 1L;

        Refusal(String message) {
            super(message, null, false, false);
        }
    }

    private Prepared prepare() throws Refusal, IOException {
        SecureDirectoryProvider provider;
        try {
            provider = SecureDirectories.provider();
        } catch (UnsupportedPlatformException e) {
            throw new Refusal(e.getMessage());
        }
        ProcessWatcher processes = provider.processWatcher();
        String osName = System.getProperty("os.name");
        // Windows: a process has a user SID, not a uid; sessions compare SIDs (isOwnUser) and no
        // Unix socket is served, so the helper's uid is neither needed nor read there.
        long euid = EndpointDefaults.unixSocketByDefault(osName) ? ownUid(processes) : -1;
        Listener where = listener(osName, System::getenv, euid, socket, listen, tokenFile);
        String dirPath = authorityDir != null ? authorityDir : provider.defaultDirectory();
        if (dirPath == null) {
            throw new Refusal("no default authority directory (no home directory); pass --authority-dir");
        }
        SecureDirectory dir = open(provider, dirPath);
        StableLock instance = null;
        SecureDirectory endpointDir = null;
        StableLock endpointLock = null;
        RunAuthority authority = null;
        BearerToken token = null;
        boolean ok = false;
        try {
            // SECURITY: the single-instance lock is taken before any listener exists.
            instance = lock(dir, INSTANCE_LOCK, "another spice-authority helper is already serving " + dirPath);
            // Everything about the endpoint is checked before the authority is opened, because
            // opening a new directory creates identity.key: a refused start creates nothing there.
            Endpoint endpoint;
            String tokenName = null;
            if (where.listen() != null) {
                LoopbackEndpoint hp = loopback(where.listen());
                String tf = where.tokenFile();
                // SECURITY: the token's directory is opened by the platform provider, exactly as the
                // authority directory is: 0700 and owned by the user on POSIX, the same owner and
                // DACL rules on Windows; a refused directory refuses the start.
                endpointDir = open(provider, parentOf(tf));
                requireApart(dir, endpointDir, tf);
                endpointLock = lock(endpointDir, ENDPOINT_LOCK, "another helper uses the endpoint directory " + endpointDir.path());
                tokenName = tf.substring(lastSeparator(tf) + 1);
                try {
                    spice.authority.os.FileNames.requireValid(endpointDir.path(), tokenName);
                } catch (DirectoryRefusedException e) {
                    throw new Refusal("token file " + tf + ": " + e.getMessage());
                }
                endpoint = new Endpoint.Tcp(hp.host(), hp.port(), tf);
            } else {
                String sock = where.socket();
                if (!sock.startsWith("/")) {
                    throw new Refusal(sock + ": NAME (the socket path must be absolute)");
                }
                if (sock.getBytes(StandardCharsets.UTF_8).length > 100) {
                    throw new Refusal(sock + ": NAME (a Unix socket path must be at most 100 bytes)");
                }
                endpointDir = open(provider, parentOf(sock));
                requireApart(dir, endpointDir, sock);
                endpointLock = lock(endpointDir, ENDPOINT_LOCK, "another helper uses the endpoint directory " + endpointDir.path());
                // RACE: the endpoint lock proves no helper serves this socket; a leftover socket file
                // from a crashed helper is removed. The directory is ours and mode 0700.
                removeStaleSocket(Path.of(sock));
                endpoint = new Endpoint.Unix(sock);
            }
            if (endpoint instanceof Endpoint.Tcp tcp) {
                requireBindable(tcp);
            }
            FormatPolicy policy;
            try {
                policy = FormatsSetting.policy(formats != null ? java.util.Optional.of(formats) : FormatsSetting.fromProcess());
            } catch (IllegalArgumentException e) {
                throw new Refusal(e.getMessage());
            }
            authority = RunAuthority.open(dir, new SecureRandom(), policy);
            if (tokenName != null) {
                token = writeToken(endpointDir, tokenName, ((Endpoint.Tcp) endpoint).tokenFile());
            }
            // SECURITY: chosen once here and logged: where the platform identifies the process at the
            // other end of a TCP connection (Windows), every TCP connection must be proven to be one
            // of this user's processes, in addition to the token. Elsewhere TCP relies on the token.
            boolean tcpPeers = endpoint instanceof Endpoint.Tcp && provider.identifiesTcpPeers();
            if (endpoint instanceof Endpoint.Tcp) {
                System.getLogger(ServeCommand.class.getName()).log(System.Logger.Level.INFO,
                        tcpPeers ? "TCP peers: bearer token and the connection's owning process (same user)"
                                : "TCP peers: bearer token only (the platform does not identify a TCP peer's process)");
            }
            Prepared prepared = new Prepared(authority, instance, endpointDir, endpointLock, endpoint, token, processes,
                    new PeerPolicy(euid, tcpPeers));
            ok = true;
            return prepared;
        } catch (AuthorityException e) {
            throw new Refusal(e.getMessage());
        } finally {
            if (!ok) {
                if (token != null) {
                    token.close();
                }
                if (authority != null) {
                    authority.close();
                } else {
                    dir.close();
                }
                if (instance != null) {
                    instance.close();
                }
                if (endpointLock != null) {
                    endpointLock.close();
                }
                if (endpointDir != null) {
                    endpointDir.close();
                }
            }
        }
    }

    /**
     * Refuses a TCP address that cannot be bound now (port in use, address not local), before the
     * authority is opened, so such a start creates no identity.key. RACE: another program may take
     * the port between this probe and the listener's bind; the start then fails later, as before.
     */
    private static void requireBindable(Endpoint.Tcp tcp) throws Refusal {
        if (tcp.port() == 0) {
            return;
        }
        try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
            probe.setReuseAddress(true); // as Vert.x binds: a port in TIME_WAIT is usable
            probe.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByName(tcp.host()), tcp.port()));
        } catch (IOException e) {
            throw new Refusal("cannot listen on " + tcp.host() + ":" + tcp.port() + ": " + e.getMessage());
        }
    }

    /** Writes a fresh random bearer token to the token file; returns it. */
    private static BearerToken writeToken(SecureDirectory endpointDir, String name, String shown) throws Refusal {
        BearerToken token = BearerToken.generate(new SecureRandom());
        try {
            token.writeTo(endpointDir, name);
        } catch (DirectoryRefusedException e) {
            token.close();
            throw new Refusal("token file " + shown + ": " + e.getMessage());
        }
        return token;
    }

    /**
     * SECURITY: endpoint files live apart from the authority directory and its key (RFC 0007):
     * the endpoint directory must not be the authority directory, and the endpoint file's name
     * must not be one the authority uses.
     */
    private static void requireApart(SecureDirectory authorityDir, SecureDirectory endpointDir, String file) throws Refusal {
        if (endpointDir.identity().equals(authorityDir.identity())) {
            throw new Refusal(endpointDir.path() + ": IDENTITY (the endpoint directory must be apart from the authority directory)");
        }
        // Nor inside it (both paths are absolute and clean: the walk refused any other). A parent
        // holding both, each in its own directory, keeps them apart.
        String a = authorityDir.path();
        String e = endpointDir.path();
        if (e.startsWith(a + "/")) {
            throw new Refusal(e + ": NAME (the endpoint directory must be apart from the authority directory " + a
                    + ", not inside it)");
        }
        String name = file.substring(lastSeparator(file) + 1);
        if (name.startsWith("identity.") || name.startsWith("run-") || name.endsWith(".lock") || name.startsWith(".")) {
            throw new Refusal(file + ": NAME (reserved for authority files; choose another name)");
        }
    }

    /** Removes a leftover socket file, and only a socket (never follows or deletes anything else). */
    static void removeStaleSocket(Path sock) throws IOException, Refusal {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(sock, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException e) {
            return;
        }
        if ((mode & S_IFMT) != S_IFSOCK) { // not a FIFO, a device node or anything else "other"
            throw new Refusal(sock + ": TYPE (exists and is not a socket; not removing it)");
        }
        // RACE: between the check and the unlink only a process of this user (the directory is
        // ours, mode 0700, and we hold its endpoint lock) could swap the entry; the unlink removes
        // a name, never follows it, and the authority directory is proven apart.
        Files.deleteIfExists(sock);
    }

    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    private static SecureDirectory open(SecureDirectoryProvider provider, String path) throws Refusal {
        try {
            return provider.open(path, OpenMode.CREATE_OR_VALIDATE);
        } catch (DirectoryRefusedException e) {
            throw new Refusal(e.getMessage());
        }
    }

    private static StableLock lock(SecureDirectory dir, String name, String busyMessage) throws Refusal {
        try {
            return dir.lock(name, LockMode.NON_BLOCKING);
        } catch (DirectoryRefusedException e) {
            if (e.category() == DirectoryRefusedException.Category.BUSY) {
                throw new Refusal(busyMessage);
            }
            throw new Refusal(e.getMessage());
        }
    }

    /**
     * The directory part of an absolute file path: up to its last separator ({@code /}, and on
     * Windows also a backslash).
     */
    static String parentOf(String path) throws Refusal {
        int slash = lastSeparator(path);
        boolean absolute;
        try {
            absolute = Path.of(path).isAbsolute();
        } catch (java.nio.file.InvalidPathException e) {
            absolute = false;
        }
        if (!absolute || slash <= 0 || slash == path.length() - 1) {
            throw new Refusal(path + ": NAME (must be an absolute file path inside a directory)");
        }
        return path.substring(0, slash);
    }

    /** The index of the last path separator, -1 when there is none. */
    static int lastSeparator(String path) {
        return Math.max(path.lastIndexOf('/'), path.lastIndexOf(java.io.File.separatorChar));
    }

    /** The helper's own uid (POSIX), read once at start. */
    private static long ownUid(ProcessWatcher processes) throws Refusal {
        try {
            return processes.realUid(ProcessHandle.current().pid()).orElseThrow(
                    () -> new Refusal("cannot determine the helper's own user id"));
        } catch (spice.authority.os.ProcessWatchException e) {
            throw new Refusal("cannot determine the helper's own user id: " + e.getMessage());
        }
    }

    /** Where {@code serve} listens: a Unix socket, or loopback TCP with the token file. */
    record Listener(String socket, String listen, String tokenFile) {}

    /**
     * Where {@code serve} listens, from its options and the OS, before anything is opened. Linux
     * and macOS: the given socket or listener, else the default socket; the defaults live in
     * {@code $XDG_RUNTIME_DIR/spice-agent} or {@code /tmp/spice-agent-<uid>}. Windows: loopback TCP
     * only (no Unix socket is served), by default on {@link EndpointDefaults#WINDOWS_LISTEN} with
     * the token in {@code %LOCALAPPDATA%\spice-agent\endpoint}.
     *
     * @param uid the helper's uid; read only for a POSIX default
     */
    static Listener listener(String osName, java.util.function.UnaryOperator<String> env, long uid, String socket,
                             String listen, String tokenFile) throws Refusal {
        if (!EndpointDefaults.unixSocketByDefault(osName)) {
            if (socket != null) {
                throw new Refusal("--socket " + socket + ": the helper serves no Unix socket on Windows; it listens on "
                        + "loopback TCP with a bearer token (--listen HOST:PORT, default " + EndpointDefaults.WINDOWS_LISTEN + ")");
            }
            String tf = tokenFile;
            if (tf == null) {
                String dir = EndpointDefaults.windowsDirectory(env.apply("LOCALAPPDATA"));
                if (dir == null) {
                    throw new Refusal("no default token file: LOCALAPPDATA is not an absolute drive path; pass --token-file");
                }
                tf = dir + "\\" + EndpointDefaults.TOKEN_NAME;
            }
            return new Listener(null, listen != null ? listen : EndpointDefaults.WINDOWS_LISTEN, tf);
        }
        if (listen != null) {
            return new Listener(null, listen, tokenFile != null ? tokenFile
                    : defaultEndpointDir(env, uid) + "/" + EndpointDefaults.TOKEN_NAME);
        }
        return new Listener(socket != null ? socket : defaultEndpointDir(env, uid) + "/" + EndpointDefaults.SOCKET_NAME,
                null, null);
    }

    /** The shared default (see {@link EndpointDefaults}); our uid is known here. */
    private static String defaultEndpointDir(java.util.function.UnaryOperator<String> env, long uid) throws Refusal {
        String dir = EndpointDefaults.directory(env.apply("XDG_RUNTIME_DIR"), uid);
        if (dir == null) {
            throw new Refusal("no default endpoint directory (unknown user id); pass --socket or --listen with --token-file");
        }
        return dir;
    }

    /** {@code --listen}, as a refusal when it is not a loopback literal with a port (0: any free one). */
    private static LoopbackEndpoint loopback(String s) throws Refusal {
        try {
            return LoopbackEndpoint.parse(s, 0);
        } catch (IllegalArgumentException e) {
            throw new Refusal(e.getMessage());
        }
    }
}
