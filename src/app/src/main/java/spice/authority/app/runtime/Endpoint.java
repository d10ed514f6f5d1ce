package spice.authority.app.runtime;

/** Where the helper listens: a Unix socket or loopback TCP. Holds no secret. */
public sealed interface Endpoint {
    String display();

    /**
     * This endpoint as bound: a TCP endpoint configured with port 0 (the system picks one)
     * gets {@code boundPort}; anything else is itself.
     */
    default Endpoint bound(int boundPort) {
        return this instanceof Tcp t && t.port() == 0 ? new Tcp(t.host(), boundPort, t.tokenFile()) : this;
    }

    record Unix(String socketPath) implements Endpoint {
        @Override
        public String display() {
            return "unix:" + socketPath;
        }
    }

    record Tcp(String host, int port, String tokenFile) implements Endpoint {
        @Override
        public String display() {
            return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }
}
