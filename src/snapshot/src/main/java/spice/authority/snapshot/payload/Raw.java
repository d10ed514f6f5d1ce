package spice.authority.snapshot.payload;

import java.util.ArrayList;
import java.util.List;

/**
 * The mutable decoding model: exactly what Go's {@code encoding/json} would hold after decoding a
 * payload into the v1alpha2 or v1alpha3 structs, before any rule is checked. Zero values are {@code ""},
 * {@code 0} and empty slices; {@code data == null} means absent.
 */
final class Raw {
    private Raw() {}

    /**
     * A Go slice: {@code len} visible elements over a backing list that can hold more (stale)
     * elements beyond {@code len}. Go's decoder reuses those when a later duplicate member decodes
     * a longer array into the same slice; modelling it keeps merge semantics exact.
     */
    static final class Slice<T> {
        final ArrayList<T> backing = new ArrayList<>();
        int len;
        /**
         * Elements of the last decoded array beyond the retention limit: decoded (syntax, unknown
         * members, types) and checked on the fly, then dropped, so hostile floods of tiny elements
         * cannot allocate far beyond the input. Such an array always breaks its count rule.
         */
        int overflow;
        /** The first rule an overflow element broke (in document order), or null. */
        PayloadRejectedException overflowFailure;
        /** Accounted bytes of overflow elements (parts: for P-MSG-SIZE). */
        long overflowBytes;

        /** The element count Go would see: retained plus overflow. */
        int count() {
            return len + overflow;
        }

        List<T> view() {
            return backing.subList(0, len);
        }

        int size() {
            return len;
        }

        T get(int i) {
            return backing.get(i);
        }

        /** Go sets a slice to nil on JSON null, and to a fresh empty slice on {@code []}. */
        void resetToEmpty() {
            backing.clear();
            len = 0;
            clearOverflow();
        }

        void clearOverflow() {
            overflow = 0;
            overflowFailure = null;
            overflowBytes = 0;
        }
    }

    static final class Snapshot {
        String version = "";
        /** The format {@link #version} names, once decoding has accepted it (the builder's, when building). */
        spice.authority.snapshot.SnapshotFormat format;
        String runId = "";
        /**
         * Whether {@link #runId} is not what the input said: decoding substituted U+FFFD for an
         * invalid UTF-8 byte or an unpaired surrogate escape (or a builder was given an unpaired
         * surrogate, which the encoder writes as U+FFFD). Such a run ID breaks P-RUNID.
         */
        boolean runIdSubstituted;
        final Definition definition = new Definition();
        long completedTurns;
        final Slice<Message> history = new Slice<>();
        final Plan plan = new Plan();
        final Slice<String> seenInteractionIds = new Slice<>();
        long lastSequence;
        String status = "";
    }

    static final class Definition {
        String name = "";
        String model = "";
        long maxTurns;
    }

    static final class Message {
        String id = "";
        String role = "";
        final Slice<Part> parts = new Slice<>();

        /** Back to the zero value (reuse as a scratch element). */
        Message reset() {
            id = "";
            role = "";
            parts.resetToEmpty();
            return this;
        }
    }

    static final class Part {
        String kind = "";
        String text = "";
        String name = "";
        String callId = "";
        String namespace = "";
        byte[] data; // null or empty: absent

        boolean hasData() {
            return data != null && data.length > 0;
        }

        /** Back to the zero value (reuse as a scratch element). */
        Part reset() {
            kind = "";
            text = "";
            name = "";
            callId = "";
            namespace = "";
            data = null;
            return this;
        }
    }

    static final class Plan {
        final Slice<String> compiledIdentities = new Slice<>();
        String snapshotCompatibilityIdentity = "";
        /** v1alpha3: {@code ""} when absent or null, as Go reads it. */
        String workspaceFingerprint = "";
        /** Whether a {@code workspace_fingerprint} member appeared at all (also as null). */
        boolean workspacePresent;
        String toolPlanId = "";
        String fingerprint = "";
    }
}
