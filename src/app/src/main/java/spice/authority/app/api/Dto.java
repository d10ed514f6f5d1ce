package spice.authority.app.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.math.BigInteger;
import java.util.Map;

/** Request and response bodies of the HTTP API (fixed names of ARCHITECTURE.md). */
public final class Dto {
    private Dto() {}

    /** Unsigned 64-bit value as a JSON number. */
    public static BigInteger u64(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }

    public record SessionRequest(@JsonProperty("pid") Long pid) {}

    public record SessionResponse(@JsonProperty("session") String session, @JsonProperty("pid") long pid) {}

    public record StartRequest(@JsonProperty("run_id") String runId) {}

    public record RunView(@JsonProperty("run_id") String runId, @JsonProperty("phase") String phase,
                          @JsonProperty("run_generation") BigInteger runGeneration, @JsonProperty("owned") boolean owned) {}

    public record ImportView(@JsonProperty("import") String importId, @JsonProperty("run_id") String runId,
                             @JsonProperty("last_sequence") BigInteger lastSequence,
                             @JsonProperty("next_sequence") BigInteger nextSequence) {}

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record AuthorityView(@JsonProperty("scope_id") String scopeId,
                                @JsonProperty("key_generation") BigInteger keyGeneration,
                                @JsonProperty("state") String state,
                                @JsonProperty("directory") String directory,
                                @JsonProperty("endpoint") String endpoint,
                                @JsonProperty("sessions") int sessions,
                                @JsonProperty("owned_runs") int ownedRuns,
                                @JsonProperty("imports") int imports,
                                @JsonProperty("leases") int leases,
                                @JsonProperty("runs_by_phase") Map<String, Integer> runsByPhase,
                                @JsonProperty("unreadable_records") int unreadableRecords) {}
}
