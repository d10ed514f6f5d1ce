package spice.authority.app.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A minimal HTTP/1.1 client over a Unix socket for the end-to-end tests (Connection: close). */
public final class UnixHttp {
    private final Path socket;

    public UnixHttp(Path socket) {
        this.socket = socket;
    }

    public record Response(int status, Map<String, String> headers, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    public Response call(String method, String path, Map<String, String> headers, byte[] body) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            StringBuilder req = new StringBuilder();
            req.append(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
            for (Map.Entry<String, String> h : headers.entrySet()) {
                req.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
            }
            byte[] b = body == null ? new byte[0] : body;
            if (body != null || method.equals("POST")) {
                req.append("Content-Length: ").append(b.length).append("\r\n");
            }
            req.append("\r\n");
            var out = Channels.newOutputStream(ch);
            out.write(req.toString().getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.flush();
            return parse(Channels.newInputStream(ch));
        }
    }

    public Response get(String path) throws IOException {
        return call("GET", path, Map.of(), null);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                break;
            }
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.US_ASCII);
    }

    static Response parse(InputStream in) throws IOException {
        String status = line(in);
        if (!status.startsWith("HTTP/1.1 ")) {
            throw new IOException("bad status line");
        }
        int code = Integer.parseInt(status.substring(9, 12));
        Map<String, String> headers = new LinkedHashMap<>();
        String l;
        while (!(l = line(in)).isEmpty()) {
            int colon = l.indexOf(':');
            headers.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
        }
        byte[] body;
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            while (true) {
                int n = Integer.parseInt(line(in).split(";")[0].trim(), 16);
                if (n == 0) {
                    line(in);
                    break;
                }
                b.write(in.readNBytes(n));
                line(in);
            }
            body = b.toByteArray();
        } else if (headers.containsKey("content-length")) {
            body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
        } else {
            body = in.readAllBytes();
        }
        return new Response(code, headers, body);
    }
}
