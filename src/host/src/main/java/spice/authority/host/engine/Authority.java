package spice.authority.host.engine;

import java.io.IOException;
import spice.authority.host.ImportView;
import spice.authority.host.RunView;

/**
 * The run authority as an engine sees it: the helper's run and import operations for one session.
 * {@link Engine.Builder#open} builds the real one on a session of its own; a decorator
 * ({@link Engine.Builder#decorate}, {@link ForwardingAuthority}) may wrap it, and tests put a fake
 * door in its place to inject failures.
 */
public interface Authority {
    /** Durable ACTIVE at generation 1; the lease is this session's. */
    void start(String runId) throws IOException;

    /** Signs a payload; a SUSPENDED one keeps the lease, a terminal one ends it. */
    byte[] sign(String runId, byte[] payload) throws IOException;

    /** Local resume: durable ACTIVE at the next generation. */
    void resume(String runId) throws IOException;

    /** The host stopped; nothing is written. */
    void release(String runId) throws IOException;

    /** The helper's view of the run: phase, run generation, owned (by any session), fenced. */
    RunView inspect(String runId) throws IOException;

    ImportView prepareImport(byte[] envelope) throws IOException;

    void consume(ImportView tx) throws IOException;

    void activate(ImportView tx) throws IOException;

    void abortImport(ImportView tx) throws IOException;

    /**
     * The helper's operations through {@code client} for {@code session}, for a host that manages
     * its session itself (most use {@link Engine.Builder#open}, which owns one). The engine checks
     * every answer: a start, resume or activate must grant the lease, a sign must be the envelope
     * of the payload sent.
     */
    static Authority of(spice.authority.host.AuthorityClient client, spice.authority.host.Session session) {
        return Authorities.of(client, session);
    }
}
