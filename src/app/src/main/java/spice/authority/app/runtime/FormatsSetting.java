package spice.authority.app.runtime;

import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import spice.authority.snapshot.FormatPolicy;
import spice.authority.snapshot.SnapshotFormat;

/**
 * The helper's snapshot format policy: {@link FormatPolicy#standard()} (the format history the
 * build ships), narrowed by {@code spice.authority.formats} (or {@code serve --formats}) to the
 * versions listed, e.g. {@code v1alpha2}. The one place the policy is chosen.
 *
 * <p><b>Guarantees.</b> Only narrows: a listed version the standard policy does not accept stays
 * refused; a version that is no {@link SnapshotFormat} (or an empty list) is refused as a whole,
 * never ignored, so a typo cannot leave a format on that the setting meant to turn off.
 */
public final class FormatsSetting {
    /** The configuration property. */
    public static final String PROPERTY = "spice.authority.formats";
    /** The same setting as an environment variable. */
    public static final String ENVIRONMENT = "SPICE_AUTHORITY_FORMATS";

    private FormatsSetting() {}

    /** The policy for a comma-separated list of versions; the standard policy when absent or blank. */
    public static FormatPolicy policy(Optional<String> versions) {
        if (versions.isEmpty() || versions.get().isBlank()) {
            return FormatPolicy.standard();
        }
        return policy(List.of(versions.get().split(",", -1)));
    }

    /**
     * The standard policy refusing every format not in {@code versions} (each a version such as
     * {@code v1alpha3}, or a full wire string).
     *
     * @throws IllegalArgumentException naming a version that is no snapshot format, or for no version at all
     */
    public static FormatPolicy policy(List<String> versions) {
        Set<SnapshotFormat> kept = EnumSet.noneOf(SnapshotFormat.class);
        for (String v : versions) {
            String t = v.trim();
            SnapshotFormat f = null;
            for (SnapshotFormat c : SnapshotFormat.values()) {
                if (c.version().equals(t) || c.wire().equals(t)) {
                    f = c;
                }
            }
            if (f == null) {
                throw new IllegalArgumentException(PROPERTY + ": \"" + spice.authority.snapshot.json.SafeText.bounded(t, 64)
                        + "\" is not a snapshot format (known: " + known() + ")");
            }
            kept.add(f);
        }
        if (kept.isEmpty()) {
            throw new IllegalArgumentException(PROPERTY + ": names no format (known: " + known() + ")");
        }
        EnumSet<SnapshotFormat> refused = EnumSet.complementOf(EnumSet.copyOf(kept));
        return FormatPolicy.standard().refusing(refused.toArray(SnapshotFormat[]::new));
    }

    /** The setting as the process was given it: the system property, else the environment variable. */
    public static Optional<String> fromProcess() {
        String p = System.getProperty(PROPERTY);
        return Optional.ofNullable(p != null ? p : System.getenv(ENVIRONMENT));
    }

    private static String known() {
        java.util.StringJoiner j = new java.util.StringJoiner(", ");
        for (SnapshotFormat f : SnapshotFormat.values()) {
            j.add(f.version());
        }
        return j.toString();
    }
}
