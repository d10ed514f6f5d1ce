package spice.authority.bench;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The JVM floor for {@code bench/startup.sh}: plain JDK, binds a Unix socket, prints
 * {@code listening on unix:PATH}, answers one HTTP request with {@code 200 {"status":"UP"}}, then
 * keeps running until killed (so its RSS can be read after the first answer, like the helper's).
 *
 * <p>Usage: {@code java -cp DIR spice.authority.bench.BareUnixHttp SOCKET}
 */
public final class BareUnixHttp {
    private BareUnixHttp() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        Path socket = Path.of(args[0]);
        Files.deleteIfExists(socket);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            System.out.println("listening on unix:" + socket);
            System.out.flush();
            try (SocketChannel c = server.accept()) {
                ByteBuffer in = ByteBuffer.allocate(8192);
                // Read until the end of the request head; a GET has no body.
                while (c.read(in) >= 0) {
                    String head = new String(in.array(), 0, in.position(), StandardCharsets.ISO_8859_1);
                    if (head.contains("\r\n\r\n")) {
                        break;
                    }
                }
                byte[] body = "{\"status\":\"UP\"}".getBytes(StandardCharsets.US_ASCII);
                String response = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                        + body.length + "\r\nconnection: close\r\n\r\n";
                ByteBuffer out = ByteBuffer.allocate(response.length() + body.length);
                out.put(response.getBytes(StandardCharsets.US_ASCII)).put(body).flip();
                while (out.hasRemaining()) {
                    c.write(out);
                }
            }
            Thread.sleep(Long.MAX_VALUE);
        } finally {
            Files.deleteIfExists(socket);
        }
    }
}
