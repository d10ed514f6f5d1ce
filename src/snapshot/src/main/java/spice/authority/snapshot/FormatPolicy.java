package spice.authority.snapshot;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import spice.authority.snapshot.json.GoJsonReader;
import spice.authority.snapshot.json.JsonSyntaxException;
import spice.authority.snapshot.json.SafeText;

/**
 * Which {@link SnapshotFormat}s are accepted for signing (payloads a host asks to have signed),
 * for verification (envelopes whose claim is checked) and for import, and each format's
 * migration policy: the machine-readable format history {@code spec-kit/formats.json}, which the
 * build copies into this module's jar as {@value #RESOURCE}.
 *
 * <p><b>Guarantees.</b> Immutable and thread-safe. Fails closed: a history that is not exactly the
 * expected shape, lists a format twice, leaves out a format this code speaks, or accepts a format
 * this code does not speak is refused at load ({@link IllegalStateException}); a format the
 * history lists but this code does not know is accepted for nothing. A format not accepted for a
 * use answers false, never a default. {@link #refusing} only ever narrows a policy.
 */
public final class FormatPolicy {
    /** The classpath resource holding the format history. */
    public static final String RESOURCE = "spice/authority/snapshot/formats.json";

    private static final String[] TOP = {"description", "formats"};
    private static final String[] ENTRY = {"format", "reference", "signing", "verification", "import", "migration"};
    private static final int MAX_BYTES = 64 * 1024;

    /** One format's line of the history. */
    public record Entry(boolean signing, boolean verification, boolean importing, String migration) {}

    private final Map<SnapshotFormat, Entry> entries;

    private FormatPolicy(Map<SnapshotFormat, Entry> entries) {
        this.entries = Collections.unmodifiableMap(new EnumMap<>(entries));
    }

    private static final class Standard {
        static final FormatPolicy INSTANCE = load();

        private static FormatPolicy load() {
            try (InputStream in = FormatPolicy.class.getClassLoader().getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException("snapshot format history " + RESOURCE + " is missing from the class path");
                }
                byte[] bytes = in.readNBytes(MAX_BYTES + 1);
                return parse(bytes);
            } catch (IOException e) {
                throw new UncheckedIOException("snapshot format history " + RESOURCE + " could not be read", e);
            }
        }
    }

    /**
     * The policy of the format history this build ships ({@value #RESOURCE}), read once.
     *
     * @throws IllegalStateException when the resource is missing or malformed
     */
    public static FormatPolicy standard() {
        return Standard.INSTANCE;
    }

    /**
     * Reads a format history in the shape of {@code spec-kit/formats.json}.
     *
     * @throws IllegalStateException when it is malformed, lists a format twice, leaves out a
     *     {@link SnapshotFormat}, or accepts a format this code does not speak
     */
    public static FormatPolicy parse(byte[] json) {
        if (json.length > MAX_BYTES) {
            throw invalid("larger than " + MAX_BYTES + " bytes");
        }
        Map<SnapshotFormat, Entry> entries = new EnumMap<>(SnapshotFormat.class);
        Set<String> seen = new HashSet<>();
        try {
            GoJsonReader r = new GoJsonReader(json);
            expect(r, '{');
            r.beginObject();
            String key;
            boolean first = true;
            boolean formats = false;
            while ((key = r.nextMember(first)) != null) {
                first = false;
                switch (member(key, TOP)) {
                    case 0 -> string(r, "description");
                    case 1 -> {
                        expect(r, '[');
                        r.beginArray();
                        boolean firstEntry = true;
                        while (r.nextElement(firstEntry)) {
                            firstEntry = false;
                            entry(r, entries, seen);
                        }
                        formats = true;
                    }
                    default -> throw invalid("unexpected member");
                }
            }
            r.skipWhitespace();
            if (!r.atEnd() || !formats) {
                throw invalid("not one object with a formats list");
            }
        } catch (JsonSyntaxException e) {
            throw invalid("not JSON");
        }
        for (SnapshotFormat f : SnapshotFormat.values()) {
            if (!entries.containsKey(f)) {
                throw invalid("no entry for " + f.wire());
            }
        }
        return new FormatPolicy(entries);
    }

    private static void entry(GoJsonReader r, Map<SnapshotFormat, Entry> entries, Set<String> seen) {
        expect(r, '{');
        r.beginObject();
        String wire = null;
        String migration = null;
        Boolean signing = null;
        Boolean verification = null;
        Boolean importing = null;
        String key;
        boolean first = true;
        while ((key = r.nextMember(first)) != null) {
            first = false;
            switch (member(key, ENTRY)) {
                case 0 -> wire = string(r, "format");
                case 1 -> string(r, "reference");
                case 2 -> signing = bool(r);
                case 3 -> verification = bool(r);
                case 4 -> importing = bool(r);
                case 5 -> migration = string(r, "migration");
                default -> throw invalid("unexpected member in a format entry");
            }
        }
        if (wire == null || migration == null || signing == null || verification == null || importing == null) {
            throw invalid("a format entry lacks format, signing, verification, import or migration");
        }
        if (!seen.add(wire)) {
            throw invalid("format " + SafeText.bounded(wire, 64) + " is listed twice");
        }
        SnapshotFormat f = SnapshotFormat.fromWire(wire).orElse(null);
        if (f == null) {
            // SECURITY: history only; accepting a format this code cannot speak would be a lie.
            if (signing || verification || importing) {
                throw invalid("format " + SafeText.bounded(wire, 64) + " is accepted but not spoken by this build");
            }
            return;
        }
        entries.put(f, new Entry(signing, verification, importing, migration));
    }

    /** Exact member names only: the history is ours, written canonically. */
    private static int member(String key, String[] names) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(key)) {
                return i;
            }
        }
        return -1;
    }

    private static void expect(GoJsonReader r, int kind) {
        if (r.peekKind() != kind) {
            throw invalid("unexpected JSON type");
        }
    }

    private static String string(GoJsonReader r, String what) {
        if (r.peekKind() != '"') {
            throw invalid(what + " must be a string");
        }
        return r.readString();
    }

    private static boolean bool(GoJsonReader r) {
        int k = r.peekKind();
        if (k != 't' && k != 'f') {
            throw invalid("signing, verification and import must be true or false");
        }
        return r.readBoolean();
    }

    private static IllegalStateException invalid(String why) {
        return new IllegalStateException("snapshot format history is invalid: " + why);
    }

    /** A copy of this policy that accepts {@code refused} for nothing (e.g. a test configuration). */
    public FormatPolicy refusing(SnapshotFormat... refused) {
        Map<SnapshotFormat, Entry> narrowed = new EnumMap<>(entries);
        for (SnapshotFormat f : refused) {
            narrowed.computeIfPresent(f, (k, e) -> new Entry(false, false, false, e.migration()));
        }
        return new FormatPolicy(narrowed);
    }

    public boolean acceptsForSigning(SnapshotFormat format) {
        return entries.get(format).signing();
    }

    public boolean acceptsForVerification(SnapshotFormat format) {
        return entries.get(format).verification();
    }

    public boolean acceptsForImport(SnapshotFormat format) {
        return entries.get(format).importing();
    }

    /** The formats accepted for signing, e.g. for {@code Snapshot.decode(bytes, accepted)}. */
    public Set<SnapshotFormat> signing() {
        return select(Entry::signing);
    }

    /** The formats accepted for verification, e.g. for {@code Envelopes.validate(envelope, accepted)}. */
    public Set<SnapshotFormat> verification() {
        return select(Entry::verification);
    }

    public Set<SnapshotFormat> importing() {
        return select(Entry::importing);
    }

    /** The migration policy the history states, e.g. {@code none: start a new run}. */
    public String migration(SnapshotFormat format) {
        return entries.get(format).migration();
    }

    private Set<SnapshotFormat> select(java.util.function.Predicate<Entry> use) {
        EnumSet<SnapshotFormat> out = EnumSet.noneOf(SnapshotFormat.class);
        entries.forEach((f, e) -> {
            if (use.test(e)) {
                out.add(f);
            }
        });
        return Collections.unmodifiableSet(out);
    }

    @Override
    public String toString() {
        java.util.StringJoiner j = new java.util.StringJoiner(", ", "FormatPolicy[", "]");
        entries.forEach((f, e) -> j.add(f.wire() + (e.signing() ? " sign" : "") + (e.verification() ? " verify" : "")
                + (e.importing() ? " import" : "")));
        return j.toString();
    }
}
