package spice.authority.app.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import spice.authority.app.command.EndpointDefaults;
import spice.authority.app.command.ExitCodes;
import spice.authority.app.command.LoopbackEndpoint;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperEndpoint;
import spice.authority.host.HelperProblem;
import spice.authority.host.HelperProtocolError;
import spice.authority.host.HelperTimeout;
import spice.authority.host.HelperUnreachable;
import spice.authority.host.HelperUntrusted;
import spice.authority.host.RawJson;
import spice.authority.host.RetryPolicy;
import spice.authority.host.Users;

/**
 * Base of the commands that talk to a running helper ({@code status}, {@code runs ...}): endpoint
 * options, the {@link AuthorityClient}, and the CLI's conventions for the helper's answers. A refusal (a
 * problem body) is one line {@code spice-authority: <code>: <detail>} and exit 1; no helper is exit
 * 1 with a line saying how to start one. These commands never open a listener.
 */
abstract class HelperCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--socket", paramLabel = "PATH",
            description = "The helper's Unix socket. Default: $XDG_RUNTIME_DIR/spice-agent/authority.sock, "
                    + "else /tmp/spice-agent-<uid>/authority.sock (/private/tmp on macOS; as 'serve'). Not on Windows.")
    String socket;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Talk to a helper serving loopback TCP ('serve --listen') instead, with its bearer token. "
                    + "The token is sent only after the server has proven it holds it (the endpoint proof). "
                    + "Default on Windows: 127.0.0.1:47878.")
    String listen;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "With --listen: the helper's bearer token file. Default: $XDG_RUNTIME_DIR/spice-agent/token, "
                    + "else /tmp/spice-agent-<uid>/token (as 'serve'); on Windows %%LOCALAPPDATA%%\\spice-agent\\endpoint\\token.")
    String tokenFile;

    @Option(names = "--json", description = "Print the helper's JSON answer as it is (indented).")
    boolean json;

    /** Environment, uid and OS lookups, replaceable in tests. */
    Map<String, String> env = System.getenv();
    LongSupplier uid = HelperCommand::ownUid;
    String osName = System.getProperty("os.name");

    /** One-line refusal; the message is already safe to print. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** A usage error found after parsing (exit 2). */
    static final class Usage extends Exception {
        private static final long serialVersionUID = 1L;

        Usage(String message) {
            super(message, null, false, false);
        }
    }

    /** The command's work once the endpoint is known; returns the exit code. */
    abstract int run(AuthorityClient client) throws IOException, Refused, Usage;

    /** Checks done before anything is resolved or sent (e.g. a missing confirmation). */
    void preflight() throws Usage {}

    @Override
    public final Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        HelperEndpoint endpoint;
        try {
            preflight();
            endpoint = endpoint();
        } catch (Usage u) {
            err.println("spice-authority: " + u.getMessage());
            err.println("Try '" + spec.qualifiedName() + " --help' for usage.");
            err.flush();
            return ExitCodes.USAGE;
        } catch (Refused r) {
            return refuse(r.getMessage());
        }
        try {
            // The CLI speaks for the user once: no retries, so a refusal is shown as the helper gave it.
            // SECURITY: on TCP, where the platform can tell (Windows), the listener must be a process
            // of this user before the token is sent; the platform is asked only for a TCP endpoint.
            AuthorityClient client = AuthorityClient.builder(endpoint).tokenReader(new CliTokenReader())
                    .tcpServerCheck(endpoint instanceof HelperEndpoint.Tcp
                            ? CliTcpServerCheck.of(spice.authority.os.SecureDirectories.provider())
                            : spice.authority.host.TcpServerCheck.none())
                    .retry(RetryPolicy.NONE).userAgent("spice-authority-cli").build();
            return run(client);
        } catch (Usage u) {
            err.println("spice-authority: " + u.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        } catch (Refused r) {
            return refuse(r.getMessage());
        } catch (HelperUnreachable e) {
            return refuse("no helper is running: " + e.getMessage() + "; start it with " + serveHint());
        } catch (HelperProblem | HelperTimeout | HelperProtocolError | HelperUntrusted e) {
            return refuse(e.getMessage());
        } catch (IOException e) {
            return refuse("cannot talk to the helper at " + endpoint.display() + ": " + BoundedFiles.describe(e));
        }
    }

    int refuse(String line) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("spice-authority: " + oneLine(line));
        err.flush();
        return ExitCodes.REFUSED;
    }

    /** How to start a helper on the endpoint these options name. */
    String serveHint() {
        StringBuilder b = new StringBuilder("./spice-authority serve");
        if (socket != null) {
            b.append(" --socket ").append(socket);
        } else if (listen != null) {
            b.append(" --listen ").append(listen);
            if (tokenFile != null) {
                b.append(" --token-file ").append(tokenFile);
            }
        }
        return b.toString();
    }

    /**
     * The endpoint these options name. Linux and macOS: the Unix socket by default. Windows: the
     * helper serves only loopback TCP, by default {@link EndpointDefaults#WINDOWS_LISTEN} with the
     * token in {@code %LOCALAPPDATA%\spice-agent\endpoint}, as {@code serve} does.
     */
    HelperEndpoint endpoint() throws Usage, Refused {
        boolean windows = !EndpointDefaults.unixSocketByDefault(osName);
        if (socket != null && listen != null) {
            throw new Usage("--socket and --listen exclude each other");
        }
        if (tokenFile != null && listen == null && !windows) {
            throw new Usage("--token-file goes with --listen");
        }
        if (socket != null) {
            if (windows) {
                throw new Usage("--socket: the helper serves no Unix socket on Windows; it listens on loopback TCP "
                        + "(--listen HOST:PORT, default " + EndpointDefaults.WINDOWS_LISTEN + ")");
            }
            if (socket.isEmpty()) {
                throw new Usage("--socket needs a path");
            }
            return new HelperEndpoint.Unix(Path.of(socket));
        }
        if (listen != null || windows) {
            LoopbackEndpoint hp = loopback(listen != null ? listen : EndpointDefaults.WINDOWS_LISTEN);
            Path token = tokenFile != null ? Path.of(tokenFile)
                    : Path.of(windows ? windowsEndpointDir() : defaultEndpointDir(), EndpointDefaults.TOKEN_NAME);
            return new HelperEndpoint.Tcp(hp.address(), hp.port(), token);
        }
        return new HelperEndpoint.Unix(Path.of(defaultEndpointDir(), EndpointDefaults.SOCKET_NAME));
    }

    /** The rule of 'serve' on Windows: %LOCALAPPDATA%\spice-agent\endpoint. */
    String windowsEndpointDir() throws Refused {
        String dir = EndpointDefaults.windowsDirectory(env.get("LOCALAPPDATA"));
        if (dir == null) {
            throw new Refused("LOCALAPPDATA is not an absolute drive path, so the default token file is unknown; "
                    + "pass --token-file FILE");
        }
        return dir;
    }

    /** The rule of 'serve': $XDG_RUNTIME_DIR/spice-agent when set (absolute), else /tmp/spice-agent-UID. */
    String defaultEndpointDir() throws Refused {
        String dir = EndpointDefaults.directory(env.get("XDG_RUNTIME_DIR"), uid.getAsLong());
        if (dir == null) {
            throw new Refused("cannot determine your user id for the default endpoint; pass --socket PATH or --listen HOST:PORT");
        }
        return dir;
    }

    /** The real uid; -1 when unknown. */
    static long ownUid() {
        return Users.ownUid();
    }

    /** {@code --listen}, as a usage error when it is not a loopback literal with a port (1..65535). */
    private static LoopbackEndpoint loopback(String s) throws Usage {
        try {
            return LoopbackEndpoint.parse(s, 1);
        } catch (IllegalArgumentException e) {
            throw new Usage(e.getMessage());
        }
    }

    // ---- answers ------------------------------------------------------------------------------

    static Refused malformed(AuthorityClient client) {
        return new Refused("unexpected response from the helper at " + client.endpoint().display() + ": malformed JSON");
    }

    /** Prints a successful answer's JSON, indented, as the helper sent it. */
    void printJson(AuthorityClient client, RawJson json) throws Refused {
        String pretty;
        try {
            pretty = HelperJson.pretty(json.bytes());
        } catch (HelperJson.MalformedException e) {
            throw malformed(client);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println(pretty);
        out.flush();
    }

    // ---- text ---------------------------------------------------------------------------------

    /** A value from the helper made safe for a terminal: control characters become '?'. */
    static String clean(Object value) {
        String s = String.valueOf(value);
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            // SECURITY: the helper's strings must not carry terminal escapes or line breaks.
            b.append(c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029' ? '?' : c);
        }
        return b.toString();
    }

    /** One line of at most 1000 characters. */
    static String oneLine(String s) {
        String c = clean(s);
        return c.length() > 1000 ? c.substring(0, 1000) + "..." : c;
    }
}
