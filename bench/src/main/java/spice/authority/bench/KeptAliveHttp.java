package spice.authority.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A minimal HTTP/1.1 client over one kept-alive Unix-socket connection, for the benchmarks: the
 * connection is opened once and every request reuses it (as a host that keeps its connection
 * would), so a timed request is the helper's request path and nothing of connection set-up. Reads
 * answers framed by {@code Content-Length} or {@code Transfer-Encoding: chunked}. Not thread-safe:
 * one per host thread.
 */
final class KeptAliveHttp implements AutoCloseable {

    /** An answer: status and body. */
    record Answer(int status, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        Answer require(int expected, String what) {
            if (status != expected) {
                throw new IllegalStateException(what + ": HTTP " + status + " " + text());
            }
            return this;
        }
    }

    private final SocketChannel ch;
    private final ByteBuffer in = ByteBuffer.allocate(1 << 16);

    KeptAliveHttp(Path socket) throws IOException {
        ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(socket));
        in.flip(); // empty, in read mode
    }

    Answer request(String method, String target, String session, String contentType, String accept, byte[] body)
            throws IOException {
        StringBuilder h = new StringBuilder(256);
        h.append(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: localhost\r\n");
        if (session != null) {
            h.append("Spice-Session: ").append(session).append("\r\n");
        }
        if (accept != null) {
            h.append("Accept: ").append(accept).append("\r\n");
        }
        if (body != null) {
            h.append("Content-Type: ").append(contentType).append("\r\nContent-Length: ").append(body.length).append("\r\n");
        }
        h.append("\r\n");
        byte[] head = h.toString().getBytes(StandardCharsets.US_ASCII);
        ByteBuffer out = ByteBuffer.allocate(head.length + (body == null ? 0 : body.length));
        out.put(head);
        if (body != null) {
            out.put(body);
        }
        out.flip();
        while (out.hasRemaining()) {
            ch.write(out);
        }
        return readAnswer();
    }

    private Answer readAnswer() throws IOException {
        String statusLine = line();
        int status = Integer.parseInt(statusLine.substring(9, 12));
        long length = -1;
        boolean chunked = false;
        for (String l = line(); !l.isEmpty(); l = line()) {
            int colon = l.indexOf(':');
            String name = l.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = l.substring(colon + 1).trim();
            if (name.equals("content-length")) {
                length = Long.parseLong(value);
            } else if (name.equals("transfer-encoding") && value.toLowerCase(Locale.ROOT).contains("chunked")) {
                chunked = true;
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (chunked) {
            for (int size = Integer.parseInt(line().split(";")[0].trim(), 16); size > 0;
                    size = Integer.parseInt(line().split(";")[0].trim(), 16)) {
                bytes(body, size);
                line();
            }
            while (!line().isEmpty()) { // trailers
            }
        } else if (length > 0) {
            bytes(body, (int) length);
        } else if (length < 0 && status != 204 && status != 304) {
            throw new IOException("answer without a length on a kept-alive connection: " + statusLine);
        }
        return new Answer(status, body.toByteArray());
    }

    private void fill() throws IOException {
        in.compact();
        int n = ch.read(in);
        in.flip();
        if (n < 0) {
            throw new IOException("the helper closed the connection");
        }
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        while (true) {
            while (in.hasRemaining()) {
                char c = (char) (in.get() & 0xff);
                if (c == '\n') {
                    int len = sb.length();
                    return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
                }
                sb.append(c);
            }
            fill();
        }
    }

    private void bytes(ByteArrayOutputStream to, int n) throws IOException {
        while (n > 0) {
            if (!in.hasRemaining()) {
                fill();
            }
            int k = Math.min(n, in.remaining());
            to.write(in.array(), in.arrayOffset() + in.position(), k);
            in.position(in.position() + k);
            n -= k;
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
