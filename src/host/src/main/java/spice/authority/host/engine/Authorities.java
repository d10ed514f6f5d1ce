package spice.authority.host.engine;

import java.io.IOException;
import java.util.Objects;
import spice.authority.host.AuthorityClient;
import spice.authority.host.HelperProblem;
import spice.authority.host.HelperProtocolError;
import spice.authority.host.HelperTimeout;
import spice.authority.host.ImportView;
import spice.authority.host.RunView;
import spice.authority.host.Session;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.SnapshotFormat;

/** The engine's own rules about the helper's answers, and the real {@link Authority}; not public API. */
final class Authorities {
    private Authorities() {
    }

    /** The helper's operations through {@code client} for {@code session}. */
    static Authority of(AuthorityClient client, Session session) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(session, "session");
        return new Authority() {
            @Override
            public void start(String runId) throws IOException {
                requireGrant(runId, "start", client.start(session, runId));
            }

            @Override
            public byte[] sign(String runId, byte[] payload) throws IOException {
                return requireEnvelopeOf(runId, payload, client.sign(session, runId, payload));
            }

            @Override
            public void resume(String runId) throws IOException {
                requireGrant(runId, "resume", client.resume(session, runId));
            }

            @Override
            public void release(String runId) throws IOException {
                client.release(session, runId);
            }

            @Override
            public RunView inspect(String runId) throws IOException {
                return client.run(runId);
            }

            @Override
            public ImportView prepareImport(byte[] envelope) throws IOException {
                return client.prepareImport(session, envelope);
            }

            @Override
            public void consume(ImportView tx) throws IOException {
                client.consume(session, tx);
            }

            @Override
            public void activate(ImportView tx) throws IOException {
                requireGrant(tx.runId(), "activate", client.activate(session, tx));
            }

            @Override
            public void abortImport(ImportView tx) throws IOException {
                client.abortImport(session, tx);
            }

            @Override
            public String toString() {
                return "Authority[" + client + ", " + session + "]";
            }
        };
    }

    /**
     * SECURITY: a 200 is not a lease. The answer to a start, resume or activate must name the run
     * asked for, ACTIVE, owned and not fenced; anything else (another run's view, a FAILED phase,
     * {@code owned: false}) is a protocol error, so the call's outcome is unknown: the engine hands
     * back whatever lease the session may hold and never runs the run on it.
     */
    static void requireGrant(String runId, String call, RunView v) throws HelperProtocolError {
        if (!runId.equals(v.runId())) {
            throw new HelperProtocolError("the helper's answer to the " + call + " of run " + runId
                    + " names another run: it grants no lease");
        }
        if (v.phase() != RunPhase.ACTIVE || !v.owned() || v.fenced()) {
            throw new HelperProtocolError("the helper's answer to the " + call + " of run " + runId
                    + " does not grant its lease (" + v.phase() + (v.owned() ? ", owned" : ", not owned")
                    + (v.fenced() ? ", fenced" : "") + ")");
        }
    }

    /**
     * A sign's answer must be the envelope of exactly the payload sent, for this run: a protobuf
     * {@code SnapshotEnvelope} of the payload's format (the engine's: it built the payload), this run ID, the payload byte for byte, its
     * SHA-256, a lifecycle and a sequence set, and an authority claim of the right shape. Anything
     * else (an empty or foreign body, another run's or payload's envelope) is a protocol error: the
     * sign's outcome is unknown, and the run is never handed over on a body that is not its
     * envelope. The MAC is the helper's to check at import (the host has no key). Checked in place:
     * the payload is compared, not copied or decoded again (the host built and checked it), so a
     * payload near 16 MiB costs no more memory than its answer.
     *
     * @return {@code envelope}
     */
    static byte[] requireEnvelopeOf(String runId, byte[] payload, byte[] envelope) throws HelperProtocolError {
        spice.authority.snapshot.proto.SnapshotEnvelope e;
        try {
            // An immutable input with aliasing: the payload field refers to the answer's bytes, not a copy.
            com.google.protobuf.CodedInputStream in = com.google.protobuf.UnsafeByteOperations.unsafeWrap(envelope).newCodedInput();
            in.enableAliasing(true);
            e = spice.authority.snapshot.proto.SnapshotEnvelope.parseFrom(in);
        } catch (java.io.IOException | RuntimeException x) { // InvalidProtocolBufferException, mostly
            throw new HelperProtocolError("the helper's answer to the sign of run " + runId + " is not an envelope");
        }
        byte[] digest = spice.authority.snapshot.crypto.HmacSha256.sha256(payload);
        boolean claimShaped = e.hasAuthority() && e.getAuthority().getScopeId().size() == 32
                && e.getAuthority().getHmacSha256().size() == 32;
        SnapshotFormat sent = SnapshotFormat.ofCanonicalPayload(payload).orElse(null);
        if (sent == null || !sent.wire().equals(e.getFormat()) || !runId.equals(e.getRunId())
                || e.getLastSequence() == 0 || e.getLastSequence() == -1L // E-SEQ, as Envelopes.validate
                || spice.authority.snapshot.payload.LifecycleStatus.fromLifecycleNumber(e.getLifecycleValue()) == null
                || !claimShaped
                || !e.getPayload().equals(com.google.protobuf.UnsafeByteOperations.unsafeWrap(payload))
                || !java.security.MessageDigest.isEqual(digest, e.getSha256().toByteArray())) {
            throw new HelperProtocolError("the helper's answer to the sign of run " + runId
                    + " is not the envelope of the payload sent");
        }
        return envelope;
    }

    /**
     * True when the helper's answer to a failed call says this session can no longer count on its
     * run lease: it does not know the session ({@code unauthorized}, {@code not_found}), the session
     * does not own the run ({@code state_conflict}, {@code busy} for a live owner), or the helper is
     * closing. False for refusals that leave the lease as it was ({@code unavailable},
     * {@code cancelled}, {@code busy} for a quota, {@code invalid_request},
     * {@code invalid_snapshot}, {@code unsupported_format}: refused before anything was written),
     * and for a failure to reach the helper at all: that proves nothing
     * was sent, not that the lease is gone (a helper whose backlog is full still holds it).
     */
    static boolean leaseLost(IOException e) {
        return switch (e) {
            case HelperProblem.Unavailable u -> false;
            case HelperProblem.Cancelled c -> false;
            case HelperProblem.Busy b -> !b.nothingHappened();
            case HelperProblem.InvalidRequest r -> false;
            case HelperProblem.InvalidSnapshot s -> false;
            case HelperProblem.UnsupportedFormat f -> false;
            case HelperProblem p -> true;
            default -> false;
        };
    }

    /**
     * True when a failed mutating call may have taken effect: the helper said {@code uncertain}, or
     * answered with a code this client does not know (its effect is unknown), or the request may
     * have arrived without an answer (timeout, unreadable answer, or anything that is not a
     * refusal of the helper or a proof that nothing was sent).
     */
    static boolean outcomeUnknown(IOException e) {
        return switch (e) {
            case HelperProblem.Uncertain u -> true;
            // SECURITY: a newer helper's code says nothing about what was written; taking it for a
            // clean refusal would let a run go on that the helper may have suspended (or consumed).
            case HelperProblem.Unrecognized u -> true;
            // The helper proved cancellation before its write, except on a sign, where wire-format
            // e.4 lets cancellation follow a successful signing write.
            case HelperProblem.Cancelled c -> c.mayFollowWrite();
            case HelperProblem p -> false;
            case HelperTimeout t -> true;
            case HelperProtocolError p -> true;
            case spice.authority.host.HelperTransportException t -> false; // unreachable, untrusted, interrupted: nothing sent
            default -> true;
        };
    }
}
