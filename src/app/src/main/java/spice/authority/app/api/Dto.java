package spice.authority.app.api;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import spice.authority.core.RunRecord;

/**
 * Request and response bodies of the HTTP API (fixed names of ARCHITECTURE.md). Each record writes
 * its own JSON; the {@code @Schema} names give the OpenAPI document the same member names
 * ({@code OpenApiDocumentTest} compares them).
 */
public final class Dto {
    private Dto() {}

    /** Unsigned 64-bit value as a JSON number. */
    public static BigInteger u64(long v) {
        return v >= 0 ? BigInteger.valueOf(v) : new BigInteger(Long.toUnsignedString(v));
    }

    /**
     * Writes an unsigned 64-bit value: below 2^63 as a long, which skips BigInteger's decimal
     * conversion (on every start and sign answer, and interpreted while the request path is cold).
     */
    static void writeU64(JsonGenerator g, BigInteger v) throws IOException {
        if (v.bitLength() < 64) {
            g.writeNumber(v.longValue());
        } else {
            g.writeNumber(v);
        }
    }

    public record SessionRequest(@Schema(name = "pid", description = "the host process (optional on a Unix socket: an ancestor of the caller)") Long pid) {
        static final Map<String, Json.Kind> MEMBERS = Map.of("pid", Json.Kind.INTEGER);

        static SessionRequest read(byte[] body, int maxBytes) {
            Map<String, Object> m = Json.readObject(body, maxBytes, "session request", MEMBERS);
            return m == null ? null : new SessionRequest((Long) m.get("pid"));
        }
    }

    public record SessionResponse(@Schema(name = "session") String session, @Schema(name = "pid") long pid) implements Json.Body {
        @Override
        public void write(JsonGenerator g) throws IOException {
            g.writeStartObject();
            g.writeStringField("session", session);
            g.writeNumberField("pid", pid);
            g.writeEndObject();
        }
    }

    /** The answer of {@code GET /v1/endpoint-proof}: a MAC of the nonce under the token, never the token. */
    public record EndpointProofResponse(@Schema(name = "proof", description = "HMAC-SHA256 under the bearer token of "
            + "\"spice-authority endpoint proof v2\", one 0x00 byte, the nonce's 32 bytes, then the helper's end of the "
            + "connection: its address length (one byte, 4 or 16), address and port (two bytes, big-endian); as 64 "
            + "lowercase hex digits")
                                        String proof) implements Json.Body {
        @Override
        public void write(JsonGenerator g) throws IOException {
            g.writeStartObject();
            g.writeStringField("proof", proof);
            g.writeEndObject();
        }
    }

    public record StartRequest(@Schema(name = "run_id") String runId) {
        static final Map<String, Json.Kind> MEMBERS = Map.of("run_id", Json.Kind.STRING);

        static StartRequest read(byte[] body, int maxBytes) {
            Map<String, Object> m = Json.readObject(body, maxBytes, "start request", MEMBERS);
            return m == null ? null : new StartRequest((String) m.get("run_id"));
        }
    }

    /**
     * A run. {@code fenced} is written only when true: the run's last write has an unknown outcome
     * in this helper, which then acts on it for nobody, so a fenced run is never {@code owned}.
     */
    public record RunView(@Schema(name = "run_id") String runId, @Schema(name = "phase") String phase,
                          @Schema(name = "run_generation") BigInteger runGeneration,
                          @Schema(name = "owned", description = "a live session holds the run's lease (never for a fenced run)") boolean owned,
                          @Schema(name = "fenced", description = "present, and true, only for a run whose last outcome is uncertain: "
                                  + "nobody may act on it until the helper restarts and reads its state from disk") boolean fenced)
            implements Json.Body {

        public RunView {
            if (owned && fenced) {
                throw new IllegalArgumentException("a fenced run is not owned");
            }
        }

        /** A run that is not fenced. */
        public RunView(String runId, String phase, BigInteger runGeneration, boolean owned) {
            this(runId, phase, runGeneration, owned, false);
        }

        /**
         * The view of a verified record: owned when a live session holds its lease, unless the
         * run is fenced, which outranks the lease (the lease can no longer act on it).
         */
        public static RunView of(RunRecord r, boolean leaseHeld, boolean fenced) {
            return new RunView(r.runId(), r.phase().name(), u64(r.runGeneration()), leaseHeld && !fenced, fenced);
        }

        @Override
        public void write(JsonGenerator g) throws IOException {
            g.writeStartObject();
            g.writeStringField("run_id", runId);
            g.writeStringField("phase", phase);
            g.writeFieldName("run_generation");
            writeU64(g, runGeneration);
            g.writeBooleanField("owned", owned);
            if (fenced) {
                g.writeBooleanField("fenced", true);
            }
            g.writeEndObject();
        }
    }

    public record ImportView(@Schema(name = "import") String importId, @Schema(name = "run_id") String runId,
                             @Schema(name = "last_sequence") BigInteger lastSequence,
                             @Schema(name = "next_sequence") BigInteger nextSequence)
            implements Json.Body {
        @Override
        public void write(JsonGenerator g) throws IOException {
            g.writeStartObject();
            g.writeStringField("import", importId);
            g.writeStringField("run_id", runId);
            g.writeFieldName("last_sequence");
            writeU64(g, lastSequence);
            g.writeFieldName("next_sequence");
            writeU64(g, nextSequence);
            g.writeEndObject();
        }
    }

    /** Null members are left out. */
    public record AuthorityView(@Schema(name = "scope_id") String scopeId,
                                @Schema(name = "key_generation") BigInteger keyGeneration,
                                @Schema(name = "state") String state,
                                @Schema(name = "directory") String directory,
                                @Schema(name = "endpoint") String endpoint,
                                @Schema(name = "sessions") int sessions,
                                @Schema(name = "owned_runs") int ownedRuns,
                                @Schema(name = "imports") int imports,
                                @Schema(name = "leases") int leases,
                                @Schema(name = "runs_by_phase") Map<String, Integer> runsByPhase,
                                @Schema(name = "unreadable_records") int unreadableRecords,
                                @Schema(name = "unreadable_records_by_reason") Map<String, Integer> unreadableByReason,
                                @Schema(name = "formats") Map<String, List<String>> formats) implements Json.Body {
        @Override
        public void write(JsonGenerator g) throws IOException {
            g.writeStartObject();
            if (scopeId != null) {
                g.writeStringField("scope_id", scopeId);
            }
            if (keyGeneration != null) {
                g.writeFieldName("key_generation");
                writeU64(g, keyGeneration);
            }
            if (state != null) {
                g.writeStringField("state", state);
            }
            if (directory != null) {
                g.writeStringField("directory", directory);
            }
            if (endpoint != null) {
                g.writeStringField("endpoint", endpoint);
            }
            g.writeNumberField("sessions", sessions);
            g.writeNumberField("owned_runs", ownedRuns);
            g.writeNumberField("imports", imports);
            g.writeNumberField("leases", leases);
            if (runsByPhase != null) {
                g.writeObjectFieldStart("runs_by_phase");
                for (Map.Entry<String, Integer> e : runsByPhase.entrySet()) {
                    g.writeNumberField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            g.writeNumberField("unreadable_records", unreadableRecords);
            if (unreadableByReason != null) {
                g.writeObjectFieldStart("unreadable_records_by_reason");
                for (Map.Entry<String, Integer> e : unreadableByReason.entrySet()) {
                    g.writeNumberField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            if (formats != null) {
                g.writeObjectFieldStart("formats");
                for (Map.Entry<String, List<String>> e : formats.entrySet()) {
                    g.writeArrayFieldStart(e.getKey());
                    for (String f : e.getValue()) {
                        g.writeString(f);
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            }
            g.writeEndObject();
        }
    }
}
