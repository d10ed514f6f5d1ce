package spice.authority.snapshot.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.envelope.SigningException;

/**
 * Fuzz targets: envelope parsing (binary and protobuf JSON mapping), structural (a.3) and strict
 * validation, and keyed verification with the fixed {@link FuzzKey} authority.
 *
 * <p>Property: the only refusals are {@link EnvelopeRejectedException} and
 * {@link VerificationException}; any other throwable escapes and is a finding. A parsed binary
 * envelope re-serializes to exactly the input; an envelope that verifies and passes strict
 * validation is exactly what sealing its payload with the same authority produces (so a forged or
 * re-encoded variant cannot verify).
 *
 * <p>Regression seeds live in
 * {@code src/test/resources/spice/authority/snapshot/fuzz/EnvelopeFuzzTestInputs/<method>/}.
 */
class EnvelopeFuzzTest {

    @FuzzTest(maxDuration = "10m")
    void parseBinary(byte[] input) {
        Envelope e;
        try {
            e = Envelope.parse(input);
        } catch (EnvelopeRejectedException ex) {
            requireRule(ex);
            return;
        }
        if (!Arrays.equals(e.toBinary(), input) || e.encodedLength() != input.length) {
            throw new AssertionError("parsed envelope does not re-serialize to the input");
        }
        checkParsed(e);
    }

    @FuzzTest(maxDuration = "10m")
    void parseJson(byte[] input) {
        String json = new String(input, StandardCharsets.UTF_8);
        Envelope e;
        try {
            e = Envelope.parseJson(json);
        } catch (EnvelopeRejectedException ex) {
            requireRule(ex);
            return;
        }
        byte[] binary = e.toBinary();
        Envelope again;
        try {
            again = Envelope.parse(binary);
            if (!again.equals(e) || !Envelope.parseJson(e.toJson()).equals(e)) {
                throw new AssertionError("JSON-parsed envelope does not round-trip");
            }
        } catch (EnvelopeRejectedException ex) {
            throw new AssertionError("canonical binary of a JSON-parsed envelope rejected: " + ex.getMessage());
        }
        checkParsed(e);
    }

    /** a.3, keyed verification, then the strict rules; refusals must be typed. */
    private static void checkParsed(Envelope e) {
        Envelopes.Validated v;
        try {
            v = Envelopes.validate(e);
        } catch (EnvelopeRejectedException ex) {
            requireRule(ex);
            return;
        }
        boolean verified;
        try {
            Envelopes.verify(v, FuzzKey::verify);
            verified = true;
        } catch (VerificationException ex) {
            verified = false;
        }
        Envelopes.Strict strict;
        try {
            strict = Envelopes.validateStrict(e);
        } catch (EnvelopeRejectedException ex) {
            requireRule(ex);
            return;
        }
        if (!Arrays.equals(strict.snapshot().canonicalBytes(), e.payload())) {
            throw new AssertionError("strict snapshot differs from the envelope payload");
        }
        if (verified) {
            try (AuthorityKey key = FuzzKey.forRun(e.runId())) {
                Envelope sealed = Envelopes.seal(strict.snapshot(), key::sign);
                if (!sealed.equals(e)) {
                    throw new AssertionError("a verified envelope differs from sealing its payload");
                }
            } catch (SigningException ex) {
                throw new AssertionError("sealing a strictly valid snapshot failed");
            }
        }
    }

    private static void requireRule(EnvelopeRejectedException ex) {
        if (ex.rule() == null) {
            throw new AssertionError("rejection without a rule");
        }
    }
}
