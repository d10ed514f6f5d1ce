package spice.authority.app.session;

import java.security.MessageDigest;
import spice.authority.core.RunImport;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.envelope.Envelope;

/**
 * A prepared import held for a session, with what the host needs to resume, and the SHA-256 of
 * the envelope it was prepared from (a repeated prepare of the identical envelope by the same
 * session gets this import again). Only the digest is kept: an envelope may be megabytes, held
 * for as long as the import.
 */
public record ImportTx(String id, Session session, RunImport runImport, byte[] envelopeSha256) {
    public ImportTx {
        envelopeSha256 = envelopeSha256.clone();
    }

    /** The digest {@link #preparedFrom} compares. */
    public static byte[] digestOf(Envelope envelope) {
        return HmacSha256.sha256(envelope.toBinary());
    }

    public RunId runId() {
        return runImport.runId();
    }

    /** Whether this import was prepared from exactly the envelope whose digest is {@code sha256}. */
    public boolean preparedFrom(byte[] sha256) {
        return MessageDigest.isEqual(envelopeSha256, sha256);
    }

    @Override
    public byte[] envelopeSha256() {
        return envelopeSha256.clone();
    }

    @Override
    public String toString() {
        return "ImportTx[run=" + runId() + ", session pid=" + session.pid() + "]";
    }
}
