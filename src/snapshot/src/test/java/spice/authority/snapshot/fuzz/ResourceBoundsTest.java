package spice.authority.snapshot.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.EnvelopeRule;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.PayloadRule;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The resource side of the fuzzing property, on inputs too large for the fuzzer's length limit:
 * oversized input is refused before it is parsed, and hostile shapes (deep nesting, huge arrays
 * of tiny values, escape-heavy strings) allocate at most a small multiple of their own size.
 */
class ResourceBoundsTest {
    /** Allocation bound: this many times the input, plus a fixed allowance. */
    private static final long FACTOR = 16;
    private static final long ALLOWANCE = 1 << 20;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Test
    void oversizedPayload_refusedBeforeParsing() {
        byte[] huge = new byte[Snapshot.MAX_PAYLOAD_BYTES + 1];
        Arrays.fill(huge, (byte) '[');
        Action refuse = () -> {
            try {
                Snapshot.decode(huge);
                throw new AssertionError("accepted");
            } catch (PayloadRejectedException e) {
                assertThat(e.rule()).isEqualTo(PayloadRule.P_SIZE);
            }
        };
        allocatedBy(refuse); // once first, so class loading is not counted
        long allocated = allocatedBy(refuse);
        assertThat(allocated).as("bytes allocated refusing an oversized payload").isLessThan(64 * 1024);
    }

    @Test
    void oversizedEnvelope_refusedBeforeParsing() {
        byte[] huge = new byte[Envelope.MAX_ENCODED_BYTES + 1];
        Action refuse = () -> {
            try {
                Envelope.parse(huge);
                throw new AssertionError("accepted");
            } catch (EnvelopeRejectedException e) {
                assertThat(e.rule()).isEqualTo(EnvelopeRule.E_SIZE);
            }
        };
        allocatedBy(refuse);
        long allocated = allocatedBy(refuse);
        assertThat(allocated).as("bytes allocated refusing an oversized envelope").isLessThan(64 * 1024);
    }

    @Test
    void hostileShapes_allocateAtMostASmallMultipleOfTheInput() {
        Map<String, byte[]> inputs = new LinkedHashMap<>();
        int n = 1 << 20;
        inputs.put("nesting 1 MiB of [", "[".repeat(n).getBytes(StandardCharsets.US_ASCII));
        inputs.put("top-level array of 512k zeros", ("[" + "0,".repeat(n / 2) + "0]").getBytes(StandardCharsets.US_ASCII));
        inputs.put("text of 150k \\u0000 escapes", minimalWith("\"hello\"", "\"" + "\\u0000".repeat(150_000) + "\""));
        inputs.put("data of 250k empty arrays", minimalWith("{\"kind\":\"text\",\"text\":\"hello\"}",
                "{\"kind\":\"extension\",\"namespace\":\"x\",\"data\":[" + "[],".repeat(250_000) + "[]]}"));
        inputs.put("200k unknown members", minimalWith("{\"version\"", "{" + "\"x\":0,".repeat(200_000) + "\"version\""));
        assertThat(overBound(inputs)).isEmpty();
    }

    /**
     * Regression for the fuzzing finding of issue 2: arrays of empty objects in {@code history} or
     * {@code parts} were materialized element by element before any count rule ran (about 32x and
     * 19x the input; a 16 MiB {@code {"history":[{},{},...]}} allocated ~513 MB and threw
     * {@code OutOfMemoryError} under {@code -Xmx256m}). Fixed in 3e84df9: elements past a list's
     * limit are checked on the fly and dropped.
     */
    @Test
    void emptyElementFloods_allocateAtMostASmallMultipleOfTheInput() {
        Map<String, byte[]> inputs = new LinkedHashMap<>();
        inputs.put("history of 200k empty messages", minimalWith("\"history\":[", "\"history\":[" + "{},".repeat(200_000)));
        inputs.put("parts of 200k empty parts", minimalWith("\"parts\":[", "\"parts\":[" + "{},".repeat(200_000)));
        assertThat(overBound(inputs)).isEmpty();
    }

    /**
     * Payloads within every size rule whose decoding used to take several times their size: a
     * text the canonical form escapes (raw {@code <}: six bytes each in the canonical form, which
     * was built in full before it was compared), and a long non-Latin-1 text (decoded into a
     * builder sized by the input's bytes, two bytes per slot). Each now allocates 3.0 and 3.7
     * times its input; the old code allocated 17 and 5.7 times.
     */
    @Test
    void escapeGrowthAndWideText_allocateAtMostFiveTimesTheInput() {
        byte[] angles = minimalWith("\"hello\"", "\"" + "<".repeat(1_000_000) + "\"");
        byte[] euros = minimalWith("\"hello\"", "\"" + "\u20ac".repeat(340_000) + "\"");
        assertThat(rule(angles)).isEqualTo(PayloadRule.P_CANONICAL);
        assertThat(rule(euros)).isNull();
        Map<String, String> over = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> in : Map.of("1,000,000 raw <", angles, "340,000 euro signs", euros).entrySet()) {
            byte[] bytes = in.getValue();
            Action decode = () -> rule(bytes);
            allocatedBy(decode);
            long allocated = allocatedBy(decode);
            if (allocated > 5L * bytes.length) {
                over.put(in.getKey(), allocated + " bytes for " + bytes.length + " input bytes");
            }
        }
        assertThat(over).isEmpty();
    }

    /** The rule a payload breaks, or null when it decodes. */
    private static PayloadRule rule(byte[] payload) {
        try {
            Snapshot.decode(payload);
            return null;
        } catch (PayloadRejectedException e) {
            return e.rule();
        }
    }

    private static byte[] minimalWith(String target, String replacement) {
        String minimal = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"),
                StandardCharsets.UTF_8);
        if (!minimal.contains(target)) {
            throw new IllegalStateException("corpus file changed: " + target);
        }
        return minimal.replace(target, replacement).getBytes(StandardCharsets.UTF_8);
    }

    /** Inputs whose decoding allocated more than the bound, with the figures. */
    private static Map<String, String> overBound(Map<String, byte[]> inputs) {
        Map<String, String> over = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> in : inputs.entrySet()) {
            byte[] bytes = in.getValue();
            Action decode = () -> {
                try {
                    Snapshot.decode(bytes);
                } catch (PayloadRejectedException e) {
                    // refusal is fine; the bound is what matters
                }
            };
            allocatedBy(decode); // once first, so class loading is not counted
            long allocated = allocatedBy(decode);
            if (allocated > FACTOR * bytes.length + ALLOWANCE) {
                over.put(in.getKey(), allocated + " bytes for " + bytes.length + " input bytes");
            }
        }
        return over;
    }

    private interface Action {
        void run() throws Exception;
    }

    private static long allocatedBy(Action a) {
        long id = Thread.currentThread().threadId();
        long before = THREADS.getThreadAllocatedBytes(id);
        try {
            a.run();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return THREADS.getThreadAllocatedBytes(id) - before;
    }
}
