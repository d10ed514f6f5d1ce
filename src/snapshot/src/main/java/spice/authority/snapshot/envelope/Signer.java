package spice.authority.snapshot.envelope;

import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;

/**
 * Signs a claim input. Implementations: an in-memory {@code AuthorityKey}, or the OS-backed run
 * authority (which also persists the signed record). A signer that observes cancellation throws
 * {@link java.util.concurrent.CancellationException}, which construction passes through.
 */
@FunctionalInterface
public interface Signer {
    Claim sign(ClaimInput input) throws Exception;
}
