package spice.authority.snapshot.envelope;

import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.VerificationException;

/** A keyed verifier: returns nothing and throws the single verification failure on any mismatch. */
@FunctionalInterface
public interface Verifier {
    void verify(ClaimInput input, Claim claim) throws VerificationException;
}
