package spice.authority.host.engine;

import java.io.IOException;

/**
 * An import refused before its consume point: nothing durable changed at the helper (prepare
 * writes nothing, and no consume was sent or the helper refused it with nothing written), no
 * engine state was created, and any candidate plan lease was released.
 *
 * <p>The helper may still hold a prepared import of the run for this session, with the run's
 * lock (other sessions see it {@code busy}): when the answer to prepare-import was lost
 * ({@link Reason#AUTHORITY_REFUSED} with an unknown outcome), the engine holds no handle to abort
 * it; when the engine's abort itself failed, the failure is attached as suppressed. Ending the
 * session releases it, as the helper closes every import of a session that ends.
 */
public final class ImportRefusedException extends EngineException {
    private static final long serialVersionUID = 1L;

    /** Why the import was refused. */
    public enum Reason {
        /** The envelope or its payload does not parse. */
        MALFORMED,
        /**
         * The envelope's format is not this engine's ({@link Engine#format()}): refused before the
         * helper is asked to prepare the import.
         */
        FORMAT_MISMATCH,
        /**
         * The snapshot's workspace fingerprint is not this engine's ({@code ""} on either side
         * included): refused before the helper is asked to prepare the import.
         */
        WORKSPACE_MISMATCH,
        /** The helper refused to prepare it (not verified, run busy or ACTIVE, …): see the cause. */
        AUTHORITY_REFUSED,
        /** Only a suspended snapshot resumes; terminal ones are inspectable only. */
        NOT_SUSPENDED,
        /** This engine already started or imported the run ID (for as long as the engine lives). */
        ALREADY_IMPORTED,
        /**
         * Another import of the same run is under way in this engine: try again once it has ended
         * (it may fail, and then the run is importable again).
         */
        IMPORT_IN_PROGRESS,
        /** A convenience engine (or snapshot) has no compatibility identity: not importable. */
        NOT_IMPORTABLE,
        /** Compatibility or compiled identities differ from this engine's. */
        INCOMPATIBLE,
        /** The recorded tool plan cannot be leased. */
        PLAN_MISSING,
        /** The source leased another plan than the recorded one. */
        PLAN_SUBSTITUTED,
        /** The recomputed plan identity differs (a tool definition changed). */
        PLAN_CHANGED,
        /** The helper refused the consume and nothing was written. */
        CONSUME_REFUSED,
        /** The engine's store could not record the run before its consume point: aborted. */
        STORE_FAILED,
        /**
         * The snapshot's {@code last_sequence} leaves this engine too little of the event sequence
         * space to go on (more than {@link Engine#MAX_IMPORTED_SEQUENCE}): refused before consume.
         */
        SEQUENCE_SPACE,
        /** The engine was closed. */
        ENGINE_CLOSED
    }

    private final Reason reason;

    ImportRefusedException(Reason reason, String message, IOException cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    /** The helper's problem code when the helper refused, else {@code null}. */
    public String helperCode() {
        return getCause() instanceof spice.authority.host.HelperProblem p ? p.code() : null;
    }
}
