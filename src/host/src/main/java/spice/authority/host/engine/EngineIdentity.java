package spice.authority.host.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.json.GoText;

/**
 * The static identity an engine stamps into every plan identity it exports: its compiled bean
 * identities and its snapshot-compatibility identity.
 *
 * <p>Guarantees: compiled identities are sorted by bytes. A {@link #convenience()} identity has an
 * empty compatibility identity: its runs suspend, resume locally and export for inspection, but
 * every import into any engine is refused (RFC 0007).
 */
public record EngineIdentity(List<String> compiledIdentities, String compatibilityIdentity) {
    /** The compiled identities convenience constructors use (wire-format.md b.4). */
    public static final List<String> CONVENIENCE_COMPILED = List.of("broker:injected", "provider:injected", "stage:kernel");

    public EngineIdentity {
        List<String> sorted = new ArrayList<>(compiledIdentities);
        sorted.sort(GoText::compareUtf8);
        compiledIdentities = List.copyOf(sorted);
        Objects.requireNonNull(compatibilityIdentity, "compatibilityIdentity");
    }

    /** A convenience engine: default compiled identities, no compatibility identity. */
    public static EngineIdentity convenience() {
        return new EngineIdentity(CONVENIENCE_COMPILED, "");
    }

    /**
     * A generated application's engine: one semantic compatibility identity and the compiled
     * identities (module, version and source) of every executable bean.
     */
    public static EngineIdentity generated(String compatibilityIdentity, List<String> compiledIdentities) {
        if (compatibilityIdentity.isEmpty()) {
            throw new IllegalArgumentException("a generated engine needs a compatibility identity");
        }
        return new EngineIdentity(compiledIdentities, compatibilityIdentity);
    }

    /** True when runs of this engine can be imported elsewhere. */
    public boolean importable() {
        return !compatibilityIdentity.isEmpty();
    }
}
