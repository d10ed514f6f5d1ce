package spice.authority.snapshot.envelope;

/**
 * Envelope rules: the structural rules of wire-format.md a.3 in their check order, plus this
 * project's stricter rules (encoding strictness, payload validity and agreement; ARCHITECTURE.md
 * "stricter" points 1 and 2).
 */
public enum EnvelopeRule {
    E_SIZE("E-SIZE", "envelope must be 1 byte .. 16 MiB + 1 KiB (v1alpha3: 16 MiB + 295 bytes)"),
    E_ENCODING("E-ENCODING", "not a canonical SnapshotEnvelope encoding (unknown field, malformed or non-canonical bytes)"),
    /** The format names no known or no accepted format: callers report {@code unsupported_format}. */
    E_FORMAT("E-FORMAT", "format must name an accepted snapshot format"),
    E_RUNID("E-RUNID", "run_id must be a token of at most 128 bytes"),
    E_SEQ("E-SEQ", "last_sequence must be 1..2^64-2"),
    E_LIFECYCLE("E-LIFECYCLE", "lifecycle must be SUSPENDED, COMPLETED, FAILED or CANCELLED"),
    E_PAYLOAD_SIZE("E-PAYLOAD-SIZE", "payload must be 1..16777216 bytes"),
    E_DIGEST("E-DIGEST", "sha256 does not match the payload"),
    E_PAYLOAD_JSON("E-PAYLOAD-JSON", "payload is not a JSON object with a string run_id"),
    E_RUNID_MATCH("E-RUNID-MATCH", "payload run_id differs from the envelope run_id"),
    E_AUTH_SHAPE("E-AUTH-SHAPE", "authority claim missing or malformed"),
    E_PAYLOAD("E-PAYLOAD", "payload is not a valid canonical snapshot of the envelope's format"),
    E_AGREEMENT("E-AGREEMENT", "envelope last_sequence or lifecycle disagrees with the payload");

    private final String id;
    private final String reason;

    EnvelopeRule(String id, String reason) {
        this.id = id;
        this.reason = reason;
    }

    public String id() {
        return id;
    }

    public String reason() {
        return reason;
    }
}
