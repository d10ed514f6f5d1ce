package spice.authority.snapshot.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Arrays;
import spice.authority.snapshot.payload.Message;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/**
 * Fuzz target: {@link Snapshot#decode} on arbitrary bytes.
 *
 * <p>Property: the only way to refuse is {@link PayloadRejectedException}; any other throwable
 * (unchecked exception, {@code StackOverflowError}, {@code OutOfMemoryError}) escapes and is a
 * finding. An accepted payload is its own canonical encoding, decodes again to an equal snapshot,
 * and is rebuilt byte-identically from its typed values by {@link Snapshot#builder()}.
 *
 * <p>Regression mode (every {@code ./mvnw test}) replays the seeds in
 * {@code src/test/resources/spice/authority/snapshot/fuzz/PayloadFuzzTestInputs/decode/}; see
 * {@code bench/FUZZING.md} for fuzzing mode.
 */
class PayloadFuzzTest {

    @FuzzTest(maxDuration = "10m")
    void decode(byte[] input) {
        Snapshot s;
        try {
            s = Snapshot.decode(input);
        } catch (PayloadRejectedException e) {
            if (e.rule() == null) {
                throw new AssertionError("rejection without a rule");
            }
            return;
        }
        byte[] canonical = s.canonicalBytes();
        if (!Arrays.equals(canonical, input)) {
            throw new AssertionError("accepted payload differs from its canonical bytes");
        }
        Snapshot again;
        try {
            again = Snapshot.decode(canonical);
        } catch (PayloadRejectedException e) {
            throw new AssertionError("canonical bytes of an accepted payload rejected: " + e.getMessage());
        }
        if (!again.equals(s) || !again.history().equals(s.history()) || !again.runId().equals(s.runId())) {
            throw new AssertionError("re-decoded snapshot differs");
        }
        Snapshot rebuilt;
        try {
            rebuilt = rebuild(s);
        } catch (PayloadRejectedException e) {
            throw new AssertionError("typed values of an accepted payload rejected by the builder: " + e.getMessage());
        }
        if (!rebuilt.equals(s)) {
            throw new AssertionError("builder output differs from the accepted payload");
        }
    }

    private static Snapshot rebuild(Snapshot s) throws PayloadRejectedException {
        Snapshot.Builder b = Snapshot.builder()
                .runId(s.runId())
                .definition(s.definition())
                .completedTurns(s.completedTurns())
                .planIdentity(s.planIdentity())
                .seenInteractionIds(s.seenInteractionIds())
                .lastSequence(s.lastSequence())
                .status(s.status());
        for (Message m : s.history()) {
            b.addMessage(m);
        }
        return b.build();
    }
}
