package spice.authority.host.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import spice.authority.host.FakeHelper;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.payload.LifecycleStatus;
import spice.authority.snapshot.payload.Snapshot;

/**
 * A helper with state, behind {@link FakeHelper}'s real socket (the real client underneath): runs
 * with phase, generation and owning session; the identical payload of a SUSPENDED run gives the
 * identical envelope to any session; an import needs the run's current envelope and a dead owner.
 * A session "dies" with {@link #endSession}, as when its host process is killed. Its claims carry
 * no real MAC (the engine never checks one; the helper's own tests cover signing).
 */
final class StatefulHelper implements Function<FakeHelper.Request, byte[]> {
    static final class State {
        String phase;
        long generation;
        String owner;
        byte[] payload;
        byte[] envelope;
    }

    private final Map<String, State> runs = new HashMap<>();
    private final Set<String> liveSessions = new HashSet<>();
    private final Map<String, String> imports = new HashMap<>();
    private int sessions;
    private int importIds;

    synchronized State run(String runId) {
        return runs.get(runId);
    }

    /** The session's process died: its leases go (import transactions too). */
    synchronized void endSession(String session) {
        liveSessions.remove(session);
        for (State s : runs.values()) {
            if (session.equals(s.owner)) {
                s.owner = null;
                if (s.phase.equals("IMPORTING")) {
                    s.phase = "SUSPENDED";
                }
            }
        }
    }

    /** Every live session ends (every host process died). */
    synchronized void endAllSessions() {
        for (String s : Set.copyOf(liveSessions)) {
            endSession(s);
        }
    }

    @Override
    public synchronized byte[] apply(FakeHelper.Request r) {
        String line = r.line();
        String session = r.header("spice-session");
        String[] p = r.target().split("\\?")[0].split("/");
        try {
            if (line.equals("POST /v1/sessions")) {
                String id = String.format(Locale.ROOT, "%032x", ++sessions);
                liveSessions.add(id);
                return FakeHelper.json(200, "{\"session\":\"" + id + "\",\"pid\":1}");
            }
            if (line.startsWith("DELETE /v1/sessions/")) {
                endSession(p[3]);
                return FakeHelper.noContent();
            }
            if (line.equals("POST /v1/runs")) {
                String id = r.bodyText().replaceAll(".*\"run_id\":\"([^\"]*)\".*", "$1");
                if (runs.containsKey(id)) {
                    return FakeHelper.problem(409, "state_conflict", "run exists");
                }
                State s = new State();
                s.phase = "ACTIVE";
                s.generation = 1;
                s.owner = session;
                runs.put(id, s);
                return view(id, s);
            }
            if (p.length >= 4 && p[2].equals("runs")) {
                String id = p[3];
                State s = runs.get(id);
                if (s == null) {
                    return FakeHelper.problem(404, "not_found", "no such run");
                }
                if (line.equals("GET /v1/runs/" + id)) {
                    return view(id, s);
                }
                if (line.equals("POST /v1/runs/" + id + "/snapshots")) {
                    Snapshot snap = Snapshot.decode(r.body());
                    if (s.phase.equals("SUSPENDED") && Arrays.equals(s.payload, r.body())) {
                        return binary(s.envelope);
                    }
                    if (!s.phase.equals("ACTIVE") || !session.equals(s.owner)) {
                        return FakeHelper.problem(409, "state_conflict", "not owned");
                    }
                    byte[] env = Envelopes.unsigned(snap).seal(new Claim(new byte[32], s.generation, mac(r.body(), s.generation)))
                            .toBinary();
                    if (snap.status() == LifecycleStatus.SUSPENDED) {
                        s.phase = "SUSPENDED";
                        s.payload = r.body();
                        s.envelope = env;
                    } else {
                        s.phase = snap.status().wire().toUpperCase(Locale.ROOT);
                        s.owner = null;
                    }
                    return binary(env);
                }
                if (line.equals("POST /v1/runs/" + id + "/resume")) {
                    if (!s.phase.equals("SUSPENDED") || !session.equals(s.owner)) {
                        return FakeHelper.problem(409, "state_conflict", "not suspended and owned");
                    }
                    s.phase = "ACTIVE";
                    s.generation++;
                    s.envelope = null;
                    s.payload = null;
                    return view(id, s);
                }
                if (line.equals("DELETE /v1/runs/" + id + "/lease")) {
                    if (!session.equals(s.owner)) {
                        return FakeHelper.problem(409, "state_conflict", "no lease");
                    }
                    s.owner = null;
                    return FakeHelper.noContent();
                }
                if (line.equals("POST /v1/runs/" + id + "/abandon")) {
                    if (s.owner != null && liveSessions.contains(s.owner)) {
                        return FakeHelper.problem(409, "busy", "owner alive");
                    }
                    s.phase = "CANCELLED";
                    s.owner = null;
                    return view(id, s);
                }
            }
            if (line.equals("POST /v1/imports")) {
                Envelope e = Envelope.parse(r.body());
                State s = runs.get(e.runId());
                if (s == null || !s.phase.equals("SUSPENDED") || s.envelope == null || !Arrays.equals(s.envelope, r.body())) {
                    return FakeHelper.problem(403, "verification_failed", "snapshot verification failed");
                }
                if (s.owner != null && liveSessions.contains(s.owner)) {
                    return FakeHelper.problem(409, "busy", "the run's owner is alive");
                }
                String imp = "imp-" + (++importIds);
                imports.put(imp, e.runId());
                s.owner = session;
                return FakeHelper.json(200, "{\"import\":\"" + imp + "\",\"run_id\":\"" + e.runId() + "\",\"last_sequence\":"
                        + Long.toUnsignedString(e.lastSequence()) + ",\"next_sequence\":"
                        + Long.toUnsignedString(e.lastSequence() + 1) + "}");
            }
            if (p.length >= 4 && p[2].equals("imports")) {
                String id = imports.get(p[3]);
                State s = id == null ? null : runs.get(id);
                if (s == null || !session.equals(s.owner)) {
                    return FakeHelper.problem(404, "not_found", "no such import");
                }
                if (line.endsWith("/consume")) {
                    s.phase = "IMPORTING";
                    return view(id, s);
                }
                if (line.endsWith("/activate")) {
                    s.phase = "ACTIVE";
                    s.generation++;
                    s.envelope = null;
                    s.payload = null;
                    imports.remove(p[3]);
                    return view(id, s);
                }
                if (line.startsWith("DELETE ")) {
                    if (s.phase.equals("IMPORTING")) {
                        return FakeHelper.problem(500, "uncertain", "after consume");
                    }
                    s.owner = null;
                    imports.remove(p[3]);
                    return FakeHelper.noContent();
                }
            }
        } catch (Exception e) {
            return FakeHelper.problem(400, "invalid_request", "stateful helper: " + e.getClass().getSimpleName());
        }
        return FakeHelper.problem(404, "not_found", "no route");
    }

    private static byte[] mac(byte[] payload, long generation) {
        byte[] d = HostStore.sha256(payload);
        d[0] ^= (byte) generation;
        return d;
    }

    private static byte[] view(String id, State s) {
        return FakeHelper.json(200, "{\"run_id\":\"" + id + "\",\"phase\":\"" + s.phase + "\",\"run_generation\":"
                + s.generation + ",\"owned\":" + (s.owner != null) + "}");
    }

    private static byte[] binary(byte[] body) {
        byte[] head = ("HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }
}
