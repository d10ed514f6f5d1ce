package spice.authority.host;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The helper's authority as {@code GET /v1/authority} shows it: scope ID (hex), key generation,
 * state, directory, endpoint, counts, and runs by phase in the helper's order. No secrets.
 *
 * @param keyGeneration unsigned 64-bit
 * @param directory the authority directory, or null when the helper does not show it
 * @param endpoint the endpoint as the helper prints it, or null when it does not show it
 * @param unreadableRecords records that could not be verified (see the helper's log)
 */
public record AuthorityView(String scopeId, long keyGeneration, String state, String directory, String endpoint,
                            long sessions, long ownedRuns, long imports, long leases, Map<String, Long> runsByPhase,
                            long unreadableRecords) {
    public AuthorityView {
        Objects.requireNonNull(scopeId, "scopeId");
        Objects.requireNonNull(state, "state");
        runsByPhase = Collections.unmodifiableMap(new LinkedHashMap<>(runsByPhase));
    }
}
