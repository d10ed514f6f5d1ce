package spice.authority.host.engine;

import java.io.IOException;
import java.util.Objects;
import spice.authority.host.ImportView;

/**
 * An {@link Authority} that forwards every call to another; a decorator (logging, metrics, a
 * test's fault door) overrides the calls it cares about.
 */
public abstract class ForwardingAuthority implements Authority {
    private final Authority inner;

    protected ForwardingAuthority(Authority inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    @Override
    public void start(String runId) throws IOException {
        inner.start(runId);
    }

    @Override
    public byte[] sign(String runId, byte[] payload) throws IOException {
        return inner.sign(runId, payload);
    }

    @Override
    public void resume(String runId) throws IOException {
        inner.resume(runId);
    }

    @Override
    public void release(String runId) throws IOException {
        inner.release(runId);
    }

    @Override
    public spice.authority.host.RunView inspect(String runId) throws IOException {
        return inner.inspect(runId);
    }

    @Override
    public ImportView prepareImport(byte[] envelope) throws IOException {
        return inner.prepareImport(envelope);
    }

    @Override
    public void consume(ImportView tx) throws IOException {
        inner.consume(tx);
    }

    @Override
    public void activate(ImportView tx) throws IOException {
        inner.activate(tx);
    }

    @Override
    public void abortImport(ImportView tx) throws IOException {
        inner.abortImport(tx);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + inner + "]";
    }
}
