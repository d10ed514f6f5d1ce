package spice.authority.app.session;

import spice.authority.core.RunImport;

/** A prepared import held for a session, with what the host needs to resume. */
public record ImportTx(String id, Session session, RunImport runImport) {
    public String runId() {
        return runImport.runId();
    }
}
