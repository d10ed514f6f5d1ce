package spice.authority.core;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/** Small builders shared by the authority tests. */
final class Fixtures {
    private Fixtures() {}

    private static final String BASE = new String(
            SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8);

    /** A valid canonical payload (corpus valid-01) for {@code runId}, status and sequence. */
    static Snapshot snapshot(String runId, String status, long lastSequence) {
        String json = BASE.replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + runId + "\"")
                .replace("\"last_sequence\":7", "\"last_sequence\":" + Long.toUnsignedString(lastSequence))
                .replace("\"status\":\"suspended\"", "\"status\":\"" + status + "\"");
        try {
            return Snapshot.decode(json.getBytes(StandardCharsets.UTF_8));
        } catch (PayloadRejectedException e) {
            throw new AssertionError(e);
        }
    }

    static Snapshot suspended(String runId, long seq) {
        return snapshot(runId, "suspended", seq);
    }

    static SecureRandom random() {
        return new SecureRandom();
    }

    static RunAuthority open(MemoryDirectory dir) {
        try {
            return RunAuthority.open(dir, random());
        } catch (AuthorityException e) {
            throw new AssertionError(e);
        }
    }
}
