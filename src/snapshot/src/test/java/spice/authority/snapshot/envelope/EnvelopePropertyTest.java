package spice.authority.snapshot.envelope;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.payload.PayloadFixtures;

/**
 * Property (issue 2): every single-byte mutation of a signed envelope is refused, by strict parsing,
 * by structural or strict validation, or by keyed verification with the signing key. Nothing
 * mutated is ever accepted.
 */
class EnvelopePropertyTest {
    private static final IntUnaryOperator[] MUTATIONS = {
        x -> x ^ 0x01, x -> x ^ 0x80, x -> 0x00, x -> 0xFF, x -> (x + 1) & 0xFF, x -> (x - 1) & 0xFF, x -> x ^ 0x20,
    };

    /** Where a candidate was refused: "parse", "validate:E-…", "verify", or "ACCEPTED". */
    private static String outcome(byte[] candidate, AuthorityKey key) {
        Envelope e;
        try {
            e = Envelope.parse(candidate);
        } catch (EnvelopeRejectedException ex) {
            return "parse:" + ex.rule().id();
        }
        Envelopes.Strict s;
        try {
            s = Envelopes.validateStrict(e);
        } catch (EnvelopeRejectedException ex) {
            return "validate:" + ex.rule().id();
        }
        try {
            Envelopes.verify(s.validated(), key::verify);
        } catch (VerificationException ex) {
            return "verify";
        }
        return "ACCEPTED";
    }

    private static Map<String, Integer> mutateEveryByte(byte[] original, AuthorityKey key, List<String> accepted) {
        Map<String, Integer> counts = new TreeMap<>();
        for (int pos = 0; pos < original.length; pos++) {
            int b = original[pos] & 0xFF;
            for (IntUnaryOperator m : MUTATIONS) {
                int nb = m.applyAsInt(b);
                if (nb == b) {
                    continue;
                }
                byte[] candidate = original.clone();
                candidate[pos] = (byte) nb;
                String where = outcome(candidate, key);
                int colon = where.indexOf(':');
                counts.merge(colon < 0 ? where : where.substring(0, colon), 1, Integer::sum);
                if (where.equals("ACCEPTED")) {
                    accepted.add(String.format("byte %d: %02x -> %02x", pos, b, nb));
                }
            }
        }
        return counts;
    }

    @Test
    void signedEnvelope_everySingleByteMutation_refused() {
        Envelope sealed = EnvelopeFixtures.sealedV01();
        byte[] original = sealed.toBinary();
        List<String> accepted = new ArrayList<>();
        try (AuthorityKey key = EnvelopeFixtures.key()) {
            assertThat(outcome(original, key)).isEqualTo("ACCEPTED");
            Map<String, Integer> counts = mutateEveryByte(original, key, accepted);
            assertThat(accepted).isEmpty();
            // every layer takes part: malformed bytes, broken digest/agreement, and MAC/scope/generation
            assertThat(counts).containsKeys("parse", "validate", "verify");
            assertThat(counts.values().stream().mapToInt(Integer::intValue).sum()).isGreaterThan(original.length * 5);
        }
    }

    @Test
    void signedEnvelopeWithToolRounds_everySingleByteMutation_refused() {
        byte[] original = EnvelopeFixtures.sealed(PayloadFixtures.V03).toBinary();
        List<String> accepted = new ArrayList<>();
        try (AuthorityKey key = EnvelopeFixtures.key()) {
            assertThat(outcome(original, key)).isEqualTo("ACCEPTED");
            mutateEveryByte(original, key, accepted);
        }
        assertThat(accepted).isEmpty();
    }

    @Test
    void signedEnvelope_everyTruncationAndSingleByteInsertion_refused() {
        byte[] original = EnvelopeFixtures.sealedV01().toBinary();
        List<String> accepted = new ArrayList<>();
        try (AuthorityKey key = EnvelopeFixtures.key()) {
            for (int len = 0; len < original.length; len++) {
                if (outcome(Arrays.copyOf(original, len), key).equals("ACCEPTED")) {
                    accepted.add("truncated to " + len);
                }
            }
            for (int pos = 0; pos <= original.length; pos++) {
                for (int v : new int[] {0x00, 0x01, 0x20, 0x7F, 0x80, 0xFF}) {
                    byte[] c = new byte[original.length + 1];
                    System.arraycopy(original, 0, c, 0, pos);
                    c[pos] = (byte) v;
                    System.arraycopy(original, pos, c, pos + 1, original.length - pos);
                    if (outcome(c, key).equals("ACCEPTED")) {
                        accepted.add(String.format("inserted %02x at %d", v, pos));
                    }
                }
                if (pos < original.length) {
                    byte[] c = new byte[original.length - 1];
                    System.arraycopy(original, 0, c, 0, pos);
                    System.arraycopy(original, pos + 1, c, pos, original.length - pos - 1);
                    if (outcome(c, key).equals("ACCEPTED")) {
                        accepted.add("deleted byte " + pos);
                    }
                }
            }
        }
        assertThat(accepted).isEmpty();
    }
}
