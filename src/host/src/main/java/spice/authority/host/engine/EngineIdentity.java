package spice.authority.host.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import spice.authority.snapshot.json.GoText;
import spice.authority.snapshot.payload.PlanIdentity;

/**
 * The static identity an engine stamps into every plan identity it exports: its compiled bean
 * identities, its snapshot-compatibility identity and its workspace fingerprint.
 *
 * <p>Guarantees: compiled identities are sorted by bytes. A {@link #convenience()} identity has an
 * empty compatibility identity: its runs suspend, resume locally and export for inspection, but
 * every import into any engine is refused (RFC 0007). The workspace fingerprint is {@code ""}
 * (none) or in the form {@code sha256:} + 64 lowercase hex digits (a non-empty value is always
 * checked, wire-format-v1alpha3.md section 3); whether the engine's snapshot format needs or
 * allows one is checked when the engine is built ({@link Engine.Builder#format}).
 */
public record EngineIdentity(List<String> compiledIdentities, String compatibilityIdentity, String workspaceFingerprint) {
    /** The compiled identities convenience constructors use (wire-format.md b.4). */
    public static final List<String> CONVENIENCE_COMPILED = List.of("broker:injected", "provider:injected", "stage:kernel");

    public EngineIdentity {
        List<String> sorted = new ArrayList<>(compiledIdentities);
        sorted.sort(GoText::compareUtf8);
        compiledIdentities = List.copyOf(sorted);
        Objects.requireNonNull(compatibilityIdentity, "compatibilityIdentity");
        Objects.requireNonNull(workspaceFingerprint, "workspaceFingerprint");
        if (!workspaceFingerprint.isEmpty() && !PlanIdentity.isWorkspaceFingerprint(workspaceFingerprint)) {
            throw new IllegalArgumentException("workspace fingerprint must be sha256: followed by 64 lowercase hex digits");
        }
    }

    /** An identity without a workspace fingerprint (every v1alpha2 engine). */
    public EngineIdentity(List<String> compiledIdentities, String compatibilityIdentity) {
        this(compiledIdentities, compatibilityIdentity, "");
    }

    /** A convenience engine: default compiled identities, no compatibility identity, no workspace. */
    public static EngineIdentity convenience() {
        return new EngineIdentity(CONVENIENCE_COMPILED, "");
    }

    /**
     * A generated application's engine: one semantic compatibility identity and the compiled
     * identities (module, version and source) of every executable bean; no workspace fingerprint
     * (v1alpha2; a v1alpha3 engine adds one with {@link #withWorkspace}).
     */
    public static EngineIdentity generated(String compatibilityIdentity, List<String> compiledIdentities) {
        if (compatibilityIdentity.isEmpty()) {
            throw new IllegalArgumentException("a generated engine needs a compatibility identity");
        }
        return new EngineIdentity(compiledIdentities, compatibilityIdentity);
    }

    /**
     * This identity with {@code workspaceFingerprint} ({@code sha256:} + 64 lowercase hex, or
     * {@code ""} for none): the caller-defined canonical identity of the workspace its runs act on,
     * which v1alpha3 snapshots of an importable engine require and an import must match.
     */
    public EngineIdentity withWorkspace(String workspaceFingerprint) {
        return new EngineIdentity(compiledIdentities, compatibilityIdentity, workspaceFingerprint);
    }

    /** True when runs of this engine can be imported elsewhere. */
    public boolean importable() {
        return !compatibilityIdentity.isEmpty();
    }
}
