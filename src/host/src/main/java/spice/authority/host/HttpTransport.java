package spice.authority.host;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Arrays;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * A deliberately small HTTP/1.1 transport for the helper's local API: one request per connection
 * ({@code Connection: close}; on TCP preceded by the endpoint proof) over a Unix domain socket or loopback TCP, on plain
 * {@link SocketChannel}s, so a host needs no HTTP stack and starts fast. Responses are framed by
 * {@code Content-Length}, {@code Transfer-Encoding: chunked} or the end of the connection, and
 * bounded in size. Connect and every read or write are bounded by timeouts; an interrupt of the
 * calling thread ends a wait at once: before the request is written (token, connect, endpoint
 * proof) as a {@link HelperInterrupted} (nothing was sent), afterwards as an
 * {@link java.io.InterruptedIOException} (the request may have arrived: the outcome of a mutating
 * call is unknown).
 *
 * <p>On TCP a request takes two exchanges on one connection: first the endpoint proof
 * ({@code GET /v1/endpoint-proof} with a fresh nonce, no token, connection kept open), then the
 * request itself with {@code Connection: close}.
 *
 * <p>Guarantees: on a socket, nothing is sent before the listening process is proven to be this
 * user's ({@code SO_PEERCRED}); on TCP nothing but the proof request (which carries no secret) is
 * sent before the server on that same connection has proven it holds the token
 * ({@link EndpointProof}); only then does the request carry {@code Authorization: Bearer <token>},
 * with the token read by the {@link TokenReader} for every request and zeroed after it. A
 * {@link HelperUnreachable} or a {@link HelperUntrusted} means neither the token nor the request
 * was sent. SECURITY: no exception message of this class
 * contains the token or any other file content.
 */
final class HttpTransport {
    /** Bound on the status line plus headers of a response. */
    static final int MAX_HEAD_BYTES = 64 * 1024;
    /**
     * Bound on a response body unless the call names its own (the API's answers are small
     * documents; a run list may hold many runs). A sign's answer, the signed envelope, is bounded
     * by the envelope's own bound instead ({@link #send(String, String, Map, byte[], int)}).
     */
    static final int MAX_BODY_BYTES = 8 * 1024 * 1024;
    /**
     * The whole exchange (request out, answer in) must end within this many read timeouts: each
     * read and write is bounded by the read timeout, but a helper that drips a byte now and then
     * (or reads one) would otherwise hold the call, and an engine's close, for as long as it likes.
     */
    static final int EXCHANGE_READ_TIMEOUTS = 12;

    /** One response; header names are lower case, repeated headers joined with {@code ", "}. */
    record Response(int status, String reason, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        boolean isSuccess() {
            return status >= 200 && status < 300;
        }
    }

    private final HelperEndpoint endpoint;
    private final TokenReader tokenReader;
    private final TcpServerCheck serverCheck;
    private final String userAgent;
    private final long connectTimeoutMillis;
    private final long readTimeoutMillis;

    HttpTransport(HelperEndpoint endpoint, TokenReader tokenReader, String userAgent, Duration connectTimeout, Duration readTimeout) {
        this(endpoint, tokenReader, TcpServerCheck.none(), userAgent, connectTimeout, readTimeout);
    }

    HttpTransport(HelperEndpoint endpoint, TokenReader tokenReader, TcpServerCheck serverCheck, String userAgent,
                  Duration connectTimeout, Duration readTimeout) {
        this.endpoint = endpoint;
        this.tokenReader = tokenReader;
        this.serverCheck = java.util.Objects.requireNonNull(serverCheck, "serverCheck");
        this.userAgent = userAgent;
        this.connectTimeoutMillis = Math.max(1, connectTimeout.toMillis());
        this.readTimeoutMillis = Math.max(1, readTimeout.toMillis());
    }

    HelperEndpoint endpoint() {
        return endpoint;
    }

    /**
     * Sends one request and reads the whole response. A non-null {@code body} is sent as
     * {@code application/json} unless {@code headers} names another {@code Content-Type}.
     */
    Response send(String method, String target, Map<String, String> headers, byte[] body) throws IOException {
        return send(method, target, headers, body, MAX_BODY_BYTES);
    }

    /** As {@link #send(String, String, Map, byte[])}, the answer's body bounded by {@code maxBody} bytes. */
    Response send(String method, String target, Map<String, String> headers, byte[] body, int maxBody) throws IOException {
        requireToken(method, "method");
        requireHeaderText(target, "request target");
        if (!target.startsWith("/")) {
            throw new IllegalArgumentException("request target must start with '/'");
        }
        byte[] token;
        try {
            token = endpoint instanceof HelperEndpoint.Tcp t ? tokenReader.read(t.tokenFile()) : null;
        } catch (java.nio.channels.ClosedByInterruptException | java.io.InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new HelperInterrupted("interrupted while reading the token for " + endpoint.display() + "; nothing was sent");
        } catch (HelperTransportException e) {
            throw e;
        } catch (IOException e) {
            // A token file refused (another user's, loose rights, changed while read) or unreadable:
            // nothing was sent, which a caller must be able to tell from a lost answer.
            throw new HelperUntrusted("the token for " + endpoint.display() + " cannot be used (" + e.getMessage()
                    + "); nothing was sent");
        }
        byte[] head = null;
        boolean sending = false;
        try {
            head = head(method, target, headers, body, token, userAgent);
            try (SocketChannel ch = open(); Selector selector = Selector.open()) {
                ch.configureBlocking(false);
                SelectionKey key = ch.register(selector, 0);
                connect(ch, selector, key);
                Reader reader = new Reader(ch, selector, key);
                if (token != null) {
                    // SECURITY: on TCP anyone may hold the port; the token and the body go only on
                    // a connection whose server has just proven it holds the token.
                    requireTokenHolder(ch, selector, key, reader, token);
                }
                // The last point where nothing of the request was sent: an interrupt that came
                // before it (while connecting a Unix socket, which never waits, or right after the
                // endpoint proof) ends the call with a known outcome instead of sending it.
                if (Thread.currentThread().isInterrupted()) {
                    throw new HelperInterrupted("interrupted before the request was sent to " + endpoint.display()
                            + "; nothing was sent");
                }
                sending = true;
                // A read timeout so long that the product overflows means no overall deadline.
                long exchangeEnd = readTimeoutMillis > Long.MAX_VALUE / 4 / (EXCHANGE_READ_TIMEOUTS * 1_000_000L) ? NO_DEADLINE
                        : System.nanoTime() + EXCHANGE_READ_TIMEOUTS * readTimeoutMillis * 1_000_000L;
                try {
                    write(ch, selector, key, ByteBuffer.wrap(head), exchangeEnd);
                    if (body != null && body.length > 0) {
                        write(ch, selector, key, ByteBuffer.wrap(body), exchangeEnd);
                    }
                } catch (IOException writeFailed) {
                    if (writeFailed instanceof java.io.InterruptedIOException || writeFailed instanceof HelperTimeout) {
                        throw writeFailed;
                    }
                    // The helper may have answered before it read the whole body (a body over its
                    // budget or limit: 503 or 413, then the connection closed), and the write then
                    // failed (EPIPE, ECONNRESET). Its answer, if one came whole, is the outcome: it
                    // refused before any resource ran. Otherwise the write's failure stands (unknown).
                    Response early = earlyAnswer(reader, method, exchangeEnd);
                    if (early == null) {
                        throw writeFailed;
                    }
                    return early;
                }
                reader.deadline = exchangeEnd;
                return reader.response(method, maxBody, false);
            } catch (HelperUnreachable | HelperUntrusted | HelperInterrupted e) {
                throw e;
            } catch (IOException e) {
                if (sending) {
                    throw e;
                }
                // Before the request's first byte, whatever failed (no descriptor left for a socket
                // or a selector, an endpoint proof that timed out or could not be read) sent nothing
                // of the request: a caller must be able to tell that from a lost answer.
                throw new HelperUnreachable("cannot talk to " + endpoint.display() + " (" + e.getClass().getSimpleName()
                        + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); nothing was sent");
            }
        } finally {
            if (token != null) {
                Arrays.fill(token, (byte) 0);
            }
            if (head != null) {
                Arrays.fill(head, (byte) 0); // SECURITY: the head holds the bearer token on TCP
            }
        }
    }

    /**
     * An answer the helper sent before the request was written whole: a complete error response
     * (4xx or 5xx) already received, read within one read timeout; null when there is none.
     */
    private Response earlyAnswer(Reader reader, String method, long exchangeEnd) {
        try {
            reader.deadline = capped(System.nanoTime() + readTimeoutMillis * 1_000_000L, exchangeEnd);
            Response r = reader.response(method, MAX_PROOF_BYTES * 64, false);
            return r.status() >= 400 ? r : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** No overall deadline on a {@link Reader}'s reads (each read still has the read timeout). */
    private static final long NO_DEADLINE = Long.MIN_VALUE;

    /** Bound on the body of the endpoint proof's answer ({@code {"proof": "<64 hex>"}}). */
    static final int MAX_PROOF_BYTES = 1024;

    /**
     * The TCP endpoint proof ({@link EndpointProof}), on the connection the request will use: a
     * fresh nonce goes out without the token and without {@code Connection: close}; the answer
     * must be {@code 200}, framed by its length (the connection stays open), and carry the MAC of
     * the nonce under the token. Anything else is a {@link HelperUntrusted}, and the caller sends
     * nothing more.
     *
     * <p>SECURITY: the proof binds this connection, not the port: the request follows on the very
     * connection whose server proved it holds the token, so a server that takes the port between
     * the proof and the request gets neither. The proof also names the address and port this
     * connection reached, so a squatter cannot relay the nonce to the helper listening elsewhere and
     * pass its answer off as its own.
     */
    private void requireTokenHolder(SocketChannel ch, Selector selector, SelectionKey key, Reader reader, byte[] token)
            throws IOException {
        byte[] nonce = EndpointProof.nonce();
        String reason;
        try {
            byte[] ask = ("GET " + EndpointProof.target(nonce) + " HTTP/1.1\r\nHost: localhost\r\nUser-Agent: " + userAgent
                    + "\r\nAccept: application/json\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
            write(ch, selector, key, ByteBuffer.wrap(ask));
            // SECURITY: the whole answer within one read timeout, not each read: a squatter that
            // drips a byte now and then would otherwise hold the client for hours.
            reader.deadline = System.nanoTime() + readTimeoutMillis * 1_000_000L;
            Response r;
            try {
                r = reader.response("GET", MAX_PROOF_BYTES, true);
            } finally {
                reader.deadline = NO_DEADLINE;
            }
            String connection = r.header("connection");
            if (r.status() != 200) {
                reason = "it answered HTTP " + r.status() + " to the endpoint proof";
            } else if (connection != null && connection.toLowerCase(Locale.ROOT).contains("close")) {
                reason = "it would close the connection after the endpoint proof";
            } else {
                // SECURITY: the proof must name the endpoint this connection reached, so one relayed
                // from a helper listening elsewhere is refused.
                if (!(ch.getRemoteAddress() instanceof InetSocketAddress server) || server.getAddress() == null) {
                    throw new EndpointProof.Refused("the connection's server address is unknown");
                }
                EndpointProof.verify(token, nonce, server, r.body());
                return;
            }
        } catch (EndpointProof.Refused e) {
            reason = e.getMessage();
        } catch (java.io.InterruptedIOException | java.nio.channels.ClosedByInterruptException e) {
            // Not the server's failure: only the proof request (a nonce, no token) was sent.
            Thread.currentThread().interrupt();
            throw new HelperInterrupted("interrupted during the endpoint proof of " + endpoint.display()
                    + "; nothing was sent to it, neither the token nor the request");
        } catch (HelperTimeout e) {
            reason = "no answer to the endpoint proof within " + readTimeoutMillis + " ms";
        } catch (HelperTransportException e) {
            reason = e.getMessage();
        } catch (IOException e) {
            reason = "the connection failed during the endpoint proof (" + e.getClass().getSimpleName() + ")";
        }
        throw new HelperUntrusted("refused: the server at " + endpoint.display() + " did not prove it holds the helper's "
                + "token (" + reason + "); nothing was sent to it, neither the token nor the request. Another process may "
                + "hold the port, or the helper is older than this client.");
    }

    /** Percent-encodes one path segment (RFC 3986 unreserved characters stay as they are). */
    static String segment(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return b.toString();
    }

    // ---- request ------------------------------------------------------------------------------

    private static byte[] head(String method, String target, Map<String, String> headers, byte[] body, byte[] token,
            String userAgent) {
        StringBuilder b = new StringBuilder(256);
        b.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        b.append("Host: localhost\r\n");
        b.append("Connection: close\r\n");
        b.append("User-Agent: ").append(userAgent).append("\r\n");
        boolean accept = false;
        boolean contentType = false;
        for (Map.Entry<String, String> h : headers.entrySet()) {
            requireToken(h.getKey(), "header name");
            requireHeaderText(h.getValue(), "header " + h.getKey());
            String lower = h.getKey().toLowerCase(Locale.ROOT);
            if (lower.equals("host") || lower.equals("connection") || lower.equals("content-length")
                    || lower.equals("authorization") || lower.equals("transfer-encoding")) {
                throw new IllegalArgumentException("header " + h.getKey() + " is set by the client itself");
            }
            accept |= lower.equals("accept");
            contentType |= lower.equals("content-type");
            b.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
        }
        if (!accept) {
            b.append("Accept: application/json, application/problem+json\r\n");
        }
        if (body != null && !contentType) {
            b.append("Content-Type: application/json\r\n");
        }
        if (body != null || method.equals("POST") || method.equals("PUT")) {
            b.append("Content-Length: ").append(body == null ? 0 : body.length).append("\r\n");
        }
        byte[] start = b.toString().getBytes(StandardCharsets.UTF_8);
        byte[] auth = "Authorization: Bearer ".getBytes(StandardCharsets.US_ASCII);
        int len = start.length + (token == null ? 0 : auth.length + token.length + 2) + 2;
        ByteBuffer out = ByteBuffer.allocate(len);
        out.put(start);
        if (token != null) {
            out.put(auth).put(token).put((byte) '\r').put((byte) '\n');
        }
        out.put((byte) '\r').put((byte) '\n');
        return out.array();
    }

    private static void requireToken(String s, String what) {
        if (s == null || s.isEmpty()) {
            throw new IllegalArgumentException(what + " is empty");
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= ' ' || c >= 0x7f || "()<>@,;:\\\"/[]?={}".indexOf(c) >= 0) {
                throw new IllegalArgumentException(what + " has a character not allowed in an HTTP token");
            }
        }
    }

    private static void requireHeaderText(String s, String what) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            // SECURITY: no CR/LF or other controls: a header or target can never split the request.
            if (c < ' ' || c == 0x7f || (what.equals("request target") && (c == ' ' || c > 0x7e))) {
                throw new IllegalArgumentException(what + " has a control or non-ASCII character");
            }
        }
    }

    // ---- connection ---------------------------------------------------------------------------

    private SocketChannel open() throws IOException {
        if (endpoint instanceof HelperEndpoint.Unix u && !Files.exists(u.socket(), LinkOption.NOFOLLOW_LINKS)) {
            throw new HelperUnreachable("no helper socket at " + u.socket());
        }
        return endpoint instanceof HelperEndpoint.Unix ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
    }

    /**
     * SECURITY: the process listening on the socket must be this user's (as the helper checks its
     * callers): a socket another user put at the endpoint path first gets nothing, not even a request.
     */
    private void requireOwnUser(UnixDomainPrincipal peer) throws IOException {
        if (!Users.own().equals(peer.user())) {
            throw new HelperUntrusted("refused: " + endpoint.display() + " is served by another user's process (" + peer.user().getName() + ")");
        }
    }

    private SocketAddress address() {
        return switch (endpoint) {
            case HelperEndpoint.Unix u -> UnixDomainSocketAddress.of(u.socket());
            case HelperEndpoint.Tcp t -> new InetSocketAddress(t.address(), t.port());
        };
    }

    private void connect(SocketChannel ch, Selector selector, SelectionKey key) throws IOException {
        // No connection, no byte sent: every failure to connect is unreachable, so a retry is safe
        // and a mutating call's outcome is known (nothing happened). That includes a helper whose
        // accept backlog is full: a Unix socket then refuses at once (EAGAIN), TCP stays pending.
        try {
            if (!ch.connect(address())) {
                long deadline = System.nanoTime() + connectTimeoutMillis * 1_000_000L;
                key.interestOps(SelectionKey.OP_CONNECT);
                while (!ch.finishConnect()) {
                    await(selector, deadline, "connecting to");
                }
            }
        } catch (ConnectException e) {
            throw new HelperUnreachable("nothing is listening on " + endpoint.display() + " (connection refused)");
        } catch (java.io.InterruptedIOException | java.nio.channels.ClosedByInterruptException e) {
            // No connection, no byte sent: the interrupt ends the call with a known outcome.
            Thread.currentThread().interrupt();
            throw new HelperInterrupted("interrupted while connecting to " + endpoint.display() + "; nothing was sent");
        } catch (HelperTimeout e) {
            throw new HelperUnreachable("no connection to " + endpoint.display() + " within " + connectTimeoutMillis
                    + " ms; nothing was sent");
        } catch (java.net.SocketException e) {
            String m = e.getMessage() == null ? "" : e.getMessage();
            if (m.contains("No such file") || m.contains("Connection refused")) {
                throw new HelperUnreachable("nothing is listening on " + endpoint.display() + " (" + m + ")");
            }
            throw new HelperUnreachable("cannot connect to " + endpoint.display() + " (" + m + "); nothing was sent");
        }
        if (endpoint instanceof HelperEndpoint.Unix) {
            requireOwnUser(ch.getOption(ExtendedSocketOptions.SO_PEERCRED));
        } else if (ch.getRemoteAddress() instanceof java.net.InetSocketAddress server
                && ch.getLocalAddress() instanceof java.net.InetSocketAddress local) {
            // SECURITY: before the token is written, where the platform can tell (Windows), the
            // listener must be a process of this user: a loopback port can be held by anyone.
            try {
                serverCheck.verify(server, local);
            } catch (HelperTransportException e) {
                throw e;
            } catch (IOException e) {
                throw new HelperUntrusted("refused: the listener of " + endpoint.display() + " is not proven to be a "
                        + "process of this user (" + e.getMessage() + "); nothing was sent");
            }
        } else {
            throw new HelperUntrusted("cannot check the listener of " + endpoint.display()
                    + ": the connection's addresses are unknown; nothing was sent");
        }
    }

    private void write(SocketChannel ch, Selector selector, SelectionKey key, ByteBuffer buf) throws IOException {
        write(ch, selector, key, buf, NO_DEADLINE);
    }

    /** Writes all of {@code buf}: each wait bounded by the read timeout, all of it by {@code end} (unless {@link #NO_DEADLINE}). */
    private void write(SocketChannel ch, Selector selector, SelectionKey key, ByteBuffer buf, long end) throws IOException {
        long deadline = capped(System.nanoTime() + readTimeoutMillis * 1_000_000L, end);
        while (buf.hasRemaining()) {
            if (ch.write(buf) == 0) {
                key.interestOps(SelectionKey.OP_WRITE);
                await(selector, deadline, "sending to");
            } else {
                deadline = capped(System.nanoTime() + readTimeoutMillis * 1_000_000L, end);
            }
        }
    }

    private static long capped(long deadline, long end) {
        return end != NO_DEADLINE && end - deadline < 0 ? end : deadline;
    }

    private void await(Selector selector, long deadline, String doing) throws IOException {
        while (true) {
            // An interrupt makes select() return at once without clearing it: without this check the
            // wait would spin until the deadline. The interrupt status is kept for the caller.
            if (Thread.currentThread().isInterrupted()) {
                throw new java.io.InterruptedIOException("interrupted while " + doing + " the helper at " + endpoint.display());
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw new HelperTimeout("timed out " + doing + " the helper at " + endpoint.display());
            }
            int n = selector.select(left);
            selector.selectedKeys().clear();
            if (n > 0) {
                return;
            }
        }
    }

    // ---- response -----------------------------------------------------------------------------

    /** Buffered reads from the channel, each bounded by the read timeout. */
    private final class Reader {
        private final SocketChannel ch;
        private final Selector selector;
        private final SelectionKey key;
        private final ByteBuffer buf = ByteBuffer.allocate(16 * 1024).flip();
        private boolean eof;
        /** When set (not {@link #NO_DEADLINE}): the {@link System#nanoTime} by which every read must end. */
        long deadline = NO_DEADLINE;

        Reader(SocketChannel ch, Selector selector, SelectionKey key) {
            this.ch = ch;
            this.selector = selector;
            this.key = key;
        }

        /**
         * Reads one response.
         *
         * @param maxBody bound on the body
         * @param framed the body must be framed by {@code Content-Length} or chunked (the
         *     connection stays open after it), never by the end of the connection
         */
        Response response(String method, int maxBody, boolean framed) throws IOException {
            int headBytes = 0;
            while (true) {
                String statusLine = line(MAX_HEAD_BYTES - headBytes, true);
                headBytes += statusLine.length() + 2;
                if (!statusLine.startsWith("HTTP/1.") || statusLine.length() < 12 || statusLine.charAt(8) != ' '
                        || !isDigits(statusLine.substring(9, 12))
                        || (statusLine.length() > 12 && statusLine.charAt(12) != ' ')) {
                    throw new HelperProtocolError("malformed status line from the helper at " + endpoint.display());
                }
                int status = Integer.parseInt(statusLine.substring(9, 12));
                String reason = statusLine.length() > 13 ? statusLine.substring(13) : "";
                Map<String, String> headers = new LinkedHashMap<>();
                while (true) {
                    String h = line(MAX_HEAD_BYTES - headBytes, false);
                    headBytes += h.length() + 2;
                    if (h.isEmpty()) {
                        break;
                    }
                    int colon = h.indexOf(':');
                    if (colon <= 0 || h.charAt(0) == ' ' || h.charAt(0) == '\t') {
                        throw new HelperProtocolError("malformed header line from the helper at " + endpoint.display());
                    }
                    String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                    String value = h.substring(colon + 1).trim();
                    headers.merge(name, value, (a, b) -> a + ", " + b);
                }
                if (status >= 100 && status < 200) {
                    if (status == 101) {
                        throw new HelperProtocolError("unexpected protocol switch from the helper at " + endpoint.display());
                    }
                    continue; // interim response; the final one follows
                }
                byte[] body = body(method, status, headers, maxBody, framed);
                return new Response(status, reason, Collections.unmodifiableMap(headers), body);
            }
        }

        private byte[] body(String method, int status, Map<String, String> headers, int maxBody, boolean framed)
                throws IOException {
            if (method.equals("HEAD") || status == 204 || status == 304) {
                return new byte[0];
            }
            String te = headers.get("transfer-encoding");
            if (te != null) {
                String last = te.substring(te.lastIndexOf(',') + 1).trim().toLowerCase(Locale.ROOT);
                if (!last.equals("chunked")) {
                    throw new HelperProtocolError("unsupported transfer encoding from the helper at " + endpoint.display());
                }
                return chunked(maxBody);
            }
            String cl = headers.get("content-length");
            if (cl != null) {
                // Repeated identical values arrive joined by ", ".
                String[] values = cl.split(",");
                String first = values[0].trim();
                for (String v : values) {
                    if (!v.trim().equals(first)) {
                        throw new HelperProtocolError("conflicting Content-Length from the helper at " + endpoint.display());
                    }
                }
                if (!isDigits(first) || first.length() > 10 || Long.parseLong(first) > maxBody) {
                    throw new HelperProtocolError("response body from the helper is larger than " + maxBody
                            + " bytes or has a malformed Content-Length");
                }
                return exactly((int) Long.parseLong(first));
            }
            if (framed) {
                throw new HelperProtocolError("response from the helper at " + endpoint.display()
                        + " has neither Content-Length nor chunked framing");
            }
            return toEof(maxBody);
        }

        private byte[] chunked(int maxBody) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int trailerBytes = 0;
            while (true) {
                String sizeLine = line(1024, false);
                int semi = sizeLine.indexOf(';');
                String hex = (semi >= 0 ? sizeLine.substring(0, semi) : sizeLine).trim();
                if (hex.isEmpty() || hex.length() > 8 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                    throw new HelperProtocolError("malformed chunk size from the helper at " + endpoint.display());
                }
                long size = Long.parseLong(hex, 16);
                if (size == 0) {
                    break;
                }
                if (out.size() + size > maxBody) {
                    throw new HelperProtocolError("response body from the helper is larger than " + maxBody + " bytes");
                }
                out.write(exactly((int) size));
                if (!line(2, false).isEmpty()) {
                    throw new HelperProtocolError("malformed chunk from the helper at " + endpoint.display());
                }
            }
            while (true) { // trailers, ignored
                String t = line(MAX_HEAD_BYTES - trailerBytes, false);
                trailerBytes += t.length() + 2;
                if (t.isEmpty()) {
                    return out.toByteArray();
                }
            }
        }

        private byte[] exactly(int n) throws IOException {
            // Grown as bytes arrive, never sized by the declared length alone: a Content-Length
            // does not make the client hold that much before anything was sent.
            byte[] out = new byte[Math.min(n, 64 * 1024)];
            int off = 0;
            while (off < n) {
                if (!buf.hasRemaining() && !fill()) {
                    throw new HelperProtocolError("the helper at " + endpoint.display() + " closed the connection mid-response");
                }
                if (off == out.length) {
                    out = Arrays.copyOf(out, (int) Math.min(n, 2L * out.length));
                }
                int k = Math.min(out.length - off, buf.remaining());
                buf.get(out, off, k);
                off += k;
            }
            return out;
        }

        private byte[] toEof(int maxBody) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            while (buf.hasRemaining() || fill()) {
                if (out.size() + buf.remaining() > maxBody) {
                    throw new HelperProtocolError("response body from the helper is larger than " + maxBody + " bytes");
                }
                out.write(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
                buf.position(buf.limit());
            }
            return out.toByteArray();
        }

        /** One line without its CRLF (a bare LF is tolerated); at most {@code max} bytes. */
        private String line(int max, boolean first) throws IOException {
            StringBuilder b = new StringBuilder();
            while (true) {
                if (!buf.hasRemaining() && !fill()) {
                    throw new HelperProtocolError(first && b.isEmpty()
                            ? "the helper at " + endpoint.display() + " closed the connection without a response"
                            : "the helper at " + endpoint.display() + " closed the connection mid-response");
                }
                byte c = buf.get();
                if (c == '\n') {
                    int len = b.length();
                    if (len > 0 && b.charAt(len - 1) == '\r') {
                        b.setLength(len - 1);
                    }
                    return b.toString();
                }
                if (b.length() >= max) {
                    throw new HelperProtocolError("response head from the helper is larger than " + MAX_HEAD_BYTES + " bytes");
                }
                b.append((char) (c & 0xff)); // ISO-8859-1, as HTTP/1.1 header bytes are defined
            }
        }

        private boolean fill() throws IOException {
            if (eof) {
                return false;
            }
            buf.clear();
            long deadline = capped(System.nanoTime() + readTimeoutMillis * 1_000_000L, this.deadline);
            try {
                while (true) {
                    int n = ch.read(buf);
                    if (n < 0) {
                        eof = true;
                        return false;
                    }
                    if (n > 0) {
                        return true;
                    }
                    key.interestOps(SelectionKey.OP_READ);
                    await(selector, deadline, "waiting for");
                }
            } finally {
                buf.flip();
            }
        }
    }

    private static boolean isDigits(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
