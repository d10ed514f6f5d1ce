package spice.authority.app.command;

import java.net.InetAddress;

/**
 * The one parser of {@code --listen HOST:PORT} for the helper and its clients: HOST is a literal
 * loopback address ({@code 127.0.0.0/8} or {@code ::1}, IPv6 in brackets), never a name that DNS
 * could resolve elsewhere, so a bearer token is only ever sent to, or served on, this machine.
 */
public record LoopbackEndpoint(String host, InetAddress address, int port) {

    /**
     * @param minPort 0 where an ephemeral port is allowed (serving), 1 for connecting
     * @throws IllegalArgumentException with a one-line reason naming the option
     */
    public static LoopbackEndpoint parse(String s, int minPort) {
        String host;
        String port;
        if (s.startsWith("[")) {
            int end = s.indexOf("]:");
            if (end < 0) {
                throw new IllegalArgumentException("--listen " + s + ": expected HOST:PORT");
            }
            host = s.substring(1, end);
            port = s.substring(end + 2);
        } else {
            int colon = s.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("--listen " + s + ": expected HOST:PORT");
            }
            host = s.substring(0, colon);
            port = s.substring(colon + 1);
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--listen " + s + ": port is not a number");
        }
        if (p < minPort || p > 65535) {
            throw new IllegalArgumentException("--listen " + s + ": port out of range");
        }
        InetAddress a;
        try {
            a = InetAddress.ofLiteral(host);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--listen " + s + ": HOST must be a literal loopback address such as 127.0.0.1");
        }
        // SECURITY: loopback only.
        if (!a.isLoopbackAddress()) {
            throw new IllegalArgumentException("--listen " + s + ": only loopback addresses (127.0.0.0/8, ::1) are allowed");
        }
        return new LoopbackEndpoint(host, a, p);
    }
}
