package spice.authority.app.session;

import spice.authority.core.RunImport;
import spice.authority.snapshot.envelope.Envelope;

/**
 * A prepared import held for a session, with what the host needs to resume, and the envelope it
 * was prepared from (a repeated prepare of the identical envelope by the same session gets this
 * import again).
 */
public record ImportTx(String id, Session session, RunImport runImport, Envelope envelope) {
    public String runId() {
        return runImport.runId();
    }
}
