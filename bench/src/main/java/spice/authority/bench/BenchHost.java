package spice.authority.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * One host of the helper for the benchmarks: its own kept-alive connection and its own session.
 * Each suspend is the RFC's: start a run (durable ACTIVE), then sign its SUSPENDED payload (the
 * timed request), then release the lease (so a session never reaches its lease quota).
 */
final class BenchHost implements AutoCloseable {
    static final String PAYLOAD = "application/vnd.spice.snapshot.v1alpha2+json";
    static final String PROTOBUF = "application/x-protobuf";

    private final KeptAliveHttp http;
    private final String session;

    BenchHost(Path socket) throws IOException {
        http = new KeptAliveHttp(socket);
        String s = http.request("POST", "/v1/sessions", null, "application/json", "application/json", new byte[0])
                .require(200, "open a session").text();
        int i = s.indexOf("\"session\"");
        int q1 = s.indexOf('"', s.indexOf(':', i) + 1);
        session = s.substring(q1 + 1, s.indexOf('"', q1 + 1));
    }

    void start(String runId) throws IOException {
        http.request("POST", "/v1/runs", session, "application/json", "application/json",
                ("{\"run_id\":\"" + runId + "\"}").getBytes(StandardCharsets.UTF_8)).require(200, "start " + runId);
    }

    /** The durable suspend: returns the envelope's length. */
    int sign(String runId, byte[] payload) throws IOException {
        return http.request("POST", "/v1/runs/" + runId + "/snapshots", session, PAYLOAD, PROTOBUF, payload)
                .require(200, "sign " + runId).body().length;
    }

    void release(String runId) throws IOException {
        http.request("DELETE", "/v1/runs/" + runId + "/lease", session, null, null, null).require(204, "release " + runId);
    }

    @Override
    public void close() throws IOException {
        try {
            http.request("DELETE", "/v1/sessions/" + session, session, null, null, null);
        } finally {
            http.close();
        }
    }
}
