package spice.authority.host;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * A fake helper for CLI tests: a one-thread HTTP/1.1 server on a Unix socket or loopback TCP
 * answering canned raw responses, recording every request it receives. On TCP with a token it
 * answers the endpoint proof as the helper does (on the same connection, kept open, and not
 * recorded among {@link #requests()}), then the request that follows on that connection.
 */
public final class FakeHelper implements AutoCloseable {
    /** One request as received; header names lower case. */
    public record Request(String method, String target, Map<String, String> headers, byte[] body) {
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        public String line() {
            return method + " " + target;
        }
    }

    private final ServerSocketChannel server;
    private final Function<Request, byte[]> handler;
    private final List<Request> requests = new ArrayList<>();
    private final Thread thread;
    private final Path socket;
    private final byte[] proofToken;
    private int proofs;
    private int connections;
    private int syncs;
    /** The request of {@link #sync()}: served before any other target is looked at, never recorded. */
    private static final String SYNC = "/fake-helper/sync";

    private FakeHelper(ServerSocketChannel server, Path socket, byte[] proofToken, Function<Request, byte[]> handler) {
        this.server = server;
        this.socket = socket;
        this.proofToken = proofToken;
        this.handler = handler;
        this.thread = Thread.ofPlatform().daemon().name("fake-helper").start(this::serve);
    }

    public static FakeHelper unix(Path socket, Function<Request, byte[]> handler) throws IOException {
        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        s.bind(UnixDomainSocketAddress.of(socket));
        return new FakeHelper(s, socket, null, handler);
    }

    /** On loopback TCP, holding {@code token}: it answers the endpoint proof with it. */
    public static FakeHelper tcp(String token, Function<Request, byte[]> handler) throws IOException {
        ServerSocketChannel s = ServerSocketChannel.open();
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return new FakeHelper(s, null, token.getBytes(StandardCharsets.US_ASCII), handler);
    }

    /** How many connections it accepted. */
    public synchronized int connections() {
        return connections;
    }

    /** How many endpoint proofs it answered. */
    public synchronized int proofs() {
        return proofs;
    }

    public int port() throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    public synchronized List<Request> requests() {
        return List.copyOf(requests);
    }

    /**
     * Returns once every connection made before this call was served (they are served one at a
     * time, in order): it makes one more, whose request is neither recorded nor counted.
     */
    public void sync() throws IOException, InterruptedException {
        int mine;
        synchronized (this) {
            mine = syncs + 1;
        }
        try (SocketChannel ch = SocketChannel.open(server.getLocalAddress())) {
            ch.write(ByteBuffer.wrap(("GET " + SYNC + " HTTP/1.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
            long deadline = System.nanoTime() + 10_000_000_000L;
            synchronized (this) {
                while (syncs < mine) {
                    long left = (deadline - System.nanoTime()) / 1_000_000L;
                    if (left <= 0) {
                        throw new AssertionError("the fake helper did not serve the connections before sync() within 10 s");
                    }
                    wait(left);
                }
            }
        }
    }

    private void serve() {
        while (server.isOpen()) {
            try (SocketChannel ch = server.accept()) {
                synchronized (this) {
                    connections++;
                }
                InputStream in = Channels.newInputStream(ch);
                Request r = read(in);
                if (r.target().equals(SYNC)) {
                    synchronized (this) {
                        connections--; // not the client's
                        syncs++;
                        notifyAll();
                    }
                    continue;
                }
                while (proofToken != null && r.method().equals("GET") && r.target().startsWith("/v1/endpoint-proof?nonce=")) {
                    byte[] nonce = java.util.HexFormat.of().parseHex(r.target().substring("/v1/endpoint-proof?nonce=".length()));
                    String proof = java.util.HexFormat.of().formatHex(mac(proofToken, nonce, (InetSocketAddress) ch.getLocalAddress()));
                    synchronized (this) {
                        proofs++; // counted before the answer, which the client may act on at once
                    }
                    ByteBuffer b = ByteBuffer.wrap(json(200, "{\"proof\":\"" + proof + "\"}"));
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                    r = read(in);
                }
                synchronized (this) {
                    requests.add(r);
                }
                byte[] response = handler.apply(r);
                if (response != null) {
                    ByteBuffer b = ByteBuffer.wrap(response);
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (!server.isOpen()) {
                    return;
                }
            }
        }
    }

    /**
     * The endpoint proof computed here with javax.crypto, apart from the code under test, as the
     * helper does: for the endpoint {@code local} it accepted the connection at.
     */
    static byte[] mac(byte[] token, byte[] nonce, InetSocketAddress local) {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(token, "HmacSHA256"));
            mac.update("spice-authority endpoint proof v2".getBytes(StandardCharsets.US_ASCII));
            mac.update((byte) 0);
            mac.update(nonce);
            byte[] address = local.getAddress().getAddress();
            mac.update((byte) address.length);
            mac.update(address);
            return mac.doFinal(new byte[] {(byte) (local.getPort() >> 8), (byte) local.getPort()});
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Request read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("eof in head");
            }
            head.write(c);
            matched = (c == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (c == '\r' ? 1 : 0);
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
        String[] start = lines[0].split(" ");
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
        }
        int length = headers.containsKey("content-length") ? Integer.parseInt(headers.get("content-length")) : 0;
        byte[] body = in.readNBytes(length);
        return new Request(start[0], start[1], headers, body);
    }

    @Override
    public void close() throws Exception {
        server.close();
        thread.join(5_000);
        if (socket != null) {
            Files.deleteIfExists(socket);
        }
    }

    // ---- canned responses ---------------------------------------------------------------------

    public static byte[] json(int status, String body) {
        return raw(status, "application/json", body);
    }

    public static byte[] raw(int status, String contentType, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " " + reason(status) + "\r\n"
                + (contentType == null ? "" : "Content-Type: " + contentType + "\r\n")
                + "Content-Length: " + b.length + "\r\n\r\n";
        return concat(head.getBytes(StandardCharsets.ISO_8859_1), b);
    }

    /** Transfer-Encoding: chunked in pieces of {@code chunk} bytes, with an extension and a trailer. */
    public static byte[] chunked(int status, String contentType, String body, int chunk) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder s = new StringBuilder("HTTP/1.1 " + status + " " + reason(status) + "\r\n"
                + "Content-Type: " + contentType + "\r\nTransfer-Encoding: chunked\r\n\r\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(s.toString().getBytes(StandardCharsets.ISO_8859_1));
        for (int off = 0; off < b.length; off += chunk) {
            int n = Math.min(chunk, b.length - off);
            out.writeBytes((Integer.toHexString(n) + (off == 0 ? ";ext=1" : "") + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(b, off, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        }
        out.writeBytes("0\r\nX-Trailer: t\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    /** A problem+json body exactly as the helper writes it. */
    public static byte[] problem(int status, String code, String detail) {
        return raw(status, "application/problem+json", "{\"type\":\"urn:spice-authority:problem:" + code
                + "\",\"title\":\"T\",\"status\":" + status + ",\"code\":\"" + code + "\",\"detail\":\"" + detail + "\"}");
    }

    public static byte[] noContent() {
        return "HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 204 -> "No Content";
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 409 -> "Conflict";
            case 500 -> "Internal Server Error";
            default -> "Status";
        };
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** A token file as the helper writes it: mode 0600 (its directory is a 0700 temporary one). */
    public static void writeToken(java.nio.file.Path file, String content) throws java.io.IOException {
        java.nio.file.Files.writeString(file, content);
        java.nio.file.Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }
}
