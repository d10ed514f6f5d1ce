package spice.authority.host.engine;

import java.io.IOException;
import spice.authority.host.ImportView;
import spice.authority.host.RunView;

/**
 * The engine's view of the {@link Authority} it was given: a RuntimeException out of any call
 * (a decorating Authority's bug, say) becomes a plain {@link IOException}, which
 * {@link Authority#outcomeUnknown} takes for an unknown outcome. The call may have reached the
 * helper before it failed, so every path treats it as it treats a lost answer: one conversion
 * here instead of a catch at each call. An {@link Error} passes through; the callers that must
 * record a possible effect first catch it themselves.
 */
final class GuardedAuthority implements Authority {
    private final Authority inner;

    GuardedAuthority(Authority inner) {
        this.inner = inner;
    }

    /** {@code a} guarded (once). */
    static Authority of(Authority a) {
        return a instanceof GuardedAuthority ? a : new GuardedAuthority(a);
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    private static <T> T guarded(String what, Call<T> call) throws IOException {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw new IOException(what + " failed in the authority (" + e + "); it may have reached the helper", e);
        }
    }

    @Override
    public void start(String runId) throws IOException {
        guarded("start", () -> {
            inner.start(runId);
            return null;
        });
    }

    @Override
    public byte[] sign(String runId, byte[] payload) throws IOException {
        return guarded("sign", () -> inner.sign(runId, payload));
    }

    @Override
    public void resume(String runId) throws IOException {
        guarded("resume", () -> {
            inner.resume(runId);
            return null;
        });
    }

    @Override
    public void release(String runId) throws IOException {
        guarded("release", () -> {
            inner.release(runId);
            return null;
        });
    }

    @Override
    public RunView inspect(String runId) throws IOException {
        return guarded("inspect", () -> inner.inspect(runId));
    }

    @Override
    public ImportView prepareImport(byte[] envelope) throws IOException {
        return guarded("prepare", () -> inner.prepareImport(envelope));
    }

    @Override
    public void consume(ImportView tx) throws IOException {
        guarded("consume", () -> {
            inner.consume(tx);
            return null;
        });
    }

    @Override
    public void activate(ImportView tx) throws IOException {
        guarded("activate", () -> {
            inner.activate(tx);
            return null;
        });
    }

    @Override
    public void abortImport(ImportView tx) throws IOException {
        guarded("abort", () -> {
            inner.abortImport(tx);
            return null;
        });
    }

    @Override
    public String toString() {
        return inner.toString();
    }
}
