package spice.authority.app.it;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A small agent host, run as its own process by the end-to-end tests. Reads commands from stdin,
 * speaks to the helper over its Unix socket with its own session, prints one line per command:
 * {@code <http status> <body on one line>}.
 *
 * <pre>
 *   session | start RUN | sign RUN PAYLOAD_FILE OUT_FILE | resume RUN | release RUN | abandon RUN
 *   import ENVELOPE_FILE | consume IMPORT | activate IMPORT | abort IMPORT | quit
 * </pre>
 */
public final class TestHost {
    private TestHost() {}

    public static void main(String[] args) throws Exception {
        UnixHttp http = new UnixHttp(Path.of(args[0]));
        String session = null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split(" ");
            UnixHttp.Response r;
            Map<String, String> h = session == null ? Map.of() : Map.of("Spice-Session", session);
            switch (a[0]) {
                case "quit" -> {
                    return;
                }
                case "session" -> {
                    r = http.call("POST", "/v1/sessions", Map.of(), new byte[0]);
                    if (r.status() == 200) {
                        session = r.text().replaceAll(".*\"session\":\"([0-9a-f]+)\".*", "$1").trim();
                    }
                }
                case "start" -> r = http.call("POST", "/v1/runs", with(h, "Content-Type", "application/json"),
                        ("{\"run_id\":\"" + a[1] + "\"}").getBytes(StandardCharsets.UTF_8));
                case "sign" -> {
                    r = http.call("POST", "/v1/runs/" + a[1] + "/snapshots",
                            with(h, "Content-Type", "application/vnd.spice.snapshot.v1alpha2+json"), Files.readAllBytes(Path.of(a[2])));
                    if (r.status() == 200) {
                        Files.write(Path.of(a[3]), r.body());
                    }
                }
                case "starts" -> {
                    // starts PREFIX N: start PREFIX-0 .. PREFIX-(N-1); answers the count per status
                    // and the first refusal's body
                    java.util.TreeMap<Integer, Integer> counts = new java.util.TreeMap<>();
                    String firstRefusal = "";
                    for (int i = 0; i < Integer.parseInt(a[2]); i++) {
                        UnixHttp.Response one = http.call("POST", "/v1/runs", with(h, "Content-Type", "application/json"),
                                ("{\"run_id\":\"" + a[1] + "-" + i + "\"}").getBytes(StandardCharsets.UTF_8));
                        counts.merge(one.status(), 1, Integer::sum);
                        if (one.status() != 200 && firstRefusal.isEmpty()) {
                            firstRefusal = one.text();
                        }
                    }
                    r = new UnixHttp.Response(200, Map.of(), (counts + " " + firstRefusal).getBytes(StandardCharsets.UTF_8));
                }
                case "resume" -> r = http.call("POST", "/v1/runs/" + a[1] + "/resume", h, new byte[0]);
                case "release" -> r = http.call("DELETE", "/v1/runs/" + a[1] + "/lease", h, null);
                case "abandon" -> r = http.call("POST", "/v1/runs/" + a[1] + "/abandon", h, new byte[0]);
                case "import" -> r = http.call("POST", "/v1/imports", with(h, "Content-Type", "application/x-protobuf"),
                        Files.readAllBytes(Path.of(a[1])));
                case "consume" -> r = http.call("POST", "/v1/imports/" + a[1] + "/consume", h, new byte[0]);
                case "activate" -> r = http.call("POST", "/v1/imports/" + a[1] + "/activate", h, new byte[0]);
                case "abort" -> r = http.call("DELETE", "/v1/imports/" + a[1], h, null);
                default -> throw new IllegalArgumentException(a[0]);
            }
            String body = a[0].equals("sign") && r.status() == 200 ? "envelope " + r.body().length + " bytes" : r.text();
            System.out.println(r.status() + " " + body.replace('\n', ' '));
            System.out.flush();
        }
    }

    private static Map<String, String> with(Map<String, String> h, String k, String v) {
        java.util.HashMap<String, String> m = new java.util.HashMap<>(h);
        m.put(k, v);
        return m;
    }
}
