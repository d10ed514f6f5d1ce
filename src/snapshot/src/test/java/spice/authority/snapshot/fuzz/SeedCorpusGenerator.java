package spice.authority.snapshot.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;

/**
 * Writes the committed regression seeds of the fuzz targets from the in-repository spec kit (not a
 * test; run by hand from the repository root when spec-kit/ changes, see bench/FUZZING.md):
 *
 * <pre>
 * java -Dspice.spec.dir=spec-kit \
 *     -cp "$(cat /tmp/snapshot-test.cp):src/snapshot/target/classes:src/snapshot/target/test-classes" \
 *     spice.authority.snapshot.fuzz.SeedCorpusGenerator src/snapshot/src/test/resources
 * </pre>
 *
 * <p>Payload seeds: every public corpus file, every third transcript, and nesting probes at and just over
 * the 10,000-level limit. Envelope seeds: the two vector envelopes, every valid corpus file and a few
 * transcripts sealed with {@link FuzzKey}, and every invalid corpus payload wrapped in an envelope
 * with a correct digest and claim (so strict validation and its payload rules are reached). JSON
 * seeds: the protobuf JSON mapping of the vector and sealed envelopes.
 */
public final class SeedCorpusGenerator {
    private static final String BASE = "spice/authority/snapshot/fuzz/";

    private SeedCorpusGenerator() {}

    public static void main(String[] args) throws Exception {
        Path resources = Path.of(args.length > 0 ? args[0] : "src/test/resources");
        Path payloadDir = clean(resources.resolve(BASE + "PayloadFuzzTestInputs/decode"));
        Path binaryDir = clean(resources.resolve(BASE + "EnvelopeFuzzTestInputs/parseBinary"));
        Path jsonDir = clean(resources.resolve(BASE + "EnvelopeFuzzTestInputs/parseJson"));

        List<Path> corpus = list(SpecFiles.resolve("payload-corpus/public"), "index.json");
        List<Path> transcripts = list(SpecFiles.resolve("transcripts"), "index.json").stream()
                .filter(p -> p.getFileName().toString().startsWith("tau-")).toList();

        // Payload seeds.
        for (Path p : corpus) {
            Files.copy(p, payloadDir.resolve("corpus-" + p.getFileName()));
        }
        for (int i = 0; i < transcripts.size(); i += 3) {
            Path p = transcripts.get(i);
            Files.copy(p, payloadDir.resolve("transcript-" + p.getFileName()));
        }
        byte[] minimal = SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json");
        // data sits at depth 5 (object, history, message, parts, part): 9,995 more levels reach
        // Go's 10,000-level limit exactly, one more breaks it.
        Files.write(payloadDir.resolve("nesting-at-limit.json"), withToolData(minimal, nested(9_995)));
        Files.write(payloadDir.resolve("nesting-over-limit.json"), withToolData(minimal, nested(9_996)));

        // Envelope seeds (binary and JSON mapping).
        JsonNode vectors = SpecFiles.json("vectors/envelope.json");
        for (JsonNode c : vectors.get("cases")) {
            byte[] env = SpecFiles.hex(c.get("envelope_hex").asText());
            String name = c.get("name").asText();
            Files.write(binaryDir.resolve("vector-" + name + ".bin"), env);
            Files.writeString(jsonDir.resolve("vector-" + name + ".json"), Envelope.parse(env).toJson());
        }
        List<Path> toSeal = new ArrayList<>(corpus);
        transcripts.stream().sorted(Comparator.comparingLong(SeedCorpusGenerator::size)).limit(3).forEach(toSeal::add);
        for (Path p : toSeal) {
            byte[] payload = Files.readAllBytes(p);
            String stem = p.getFileName().toString().replaceFirst("\\.json$", "");
            byte[] env;
            String prefix = "sealed-";
            try {
                Snapshot s = Snapshot.decode(payload);
                try (AuthorityKey key = FuzzKey.forRun(s.runId())) {
                    env = Envelopes.seal(s, key::sign).toBinary();
                }
                Files.writeString(jsonDir.resolve("sealed-" + stem + ".json"), Envelope.parse(env).toJson());
            } catch (PayloadRejectedException e) {
                env = wrapInvalid(payload);
                prefix = "wrapped-";
                if (env == null) {
                    continue;
                }
            }
            Files.write(binaryDir.resolve(prefix + stem + ".bin"), env);
        }
        System.out.printf("payload=%d binary=%d json=%d files%n", count(payloadDir), count(binaryDir), count(jsonDir));
    }

    /**
     * An envelope around a payload our rules reject: run ID read leniently, lifecycle SUSPENDED,
     * sequence 1, correct digest, claim by {@link FuzzKey}. Null when the payload has no non-empty
     * string run_id (structural validation would stop it anyway; other seeds cover that).
     */
    private static byte[] wrapInvalid(byte[] payload) throws IOException {
        String runId;
        try {
            JsonNode n = new com.fasterxml.jackson.databind.ObjectMapper().readTree(payload);
            JsonNode r = n == null ? null : n.get("run_id");
            if (r == null || !r.isTextual() || r.asText().isEmpty() || r.asText().length() > 96) {
                return null;
            }
            runId = r.asText();
        } catch (IOException | RuntimeException e) {
            return null;
        }
        byte[] digest = HmacSha256.sha256(payload);
        ClaimInput input;
        try {
            input = new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, runId, 1, 1, digest);
        } catch (IllegalArgumentException e) {
            return null; // not a token: E-RUNID, covered by mutation
        }
        Claim claim;
        try (AuthorityKey key = FuzzKey.forRun(runId)) {
            claim = key.sign(input);
        }
        return SnapshotEnvelope.newBuilder()
                .setFormat(spice.authority.snapshot.SnapshotFormat.V1ALPHA2.wire())
                .setRunId(runId)
                .setLastSequence(1)
                .setLifecycleValue(1)
                .setPayload(ByteString.copyFrom(payload))
                .setSha256(ByteString.copyFrom(digest))
                .setAuthority(SnapshotAuthority.newBuilder()
                        .setScopeId(ByteString.copyFrom(claim.scopeId()))
                        .setGeneration(claim.generation())
                        .setHmacSha256(ByteString.copyFrom(claim.hmac())))
                .build()
                .toByteArray();
    }

    /** The minimal payload plus an assistant tool call carrying {@code data} and its tool result. */
    private static byte[] withToolData(byte[] minimal, String data) {
        String s = new String(minimal, StandardCharsets.UTF_8);
        String call = ",{\"id\":\"m-2\",\"role\":\"assistant\",\"parts\":[{\"kind\":\"tool_call\",\"name\":\"probe\","
                + "\"call_id\":\"c-1\",\"data\":" + data + "}]},{\"id\":\"m-3\",\"role\":\"tool\",\"parts\":"
                + "[{\"kind\":\"tool_result\",\"name\":\"probe\",\"call_id\":\"c-1\",\"data\":1}]}";
        int end = s.indexOf("}]}]") + 3;
        return (s.substring(0, end) + call + s.substring(end)).getBytes(StandardCharsets.UTF_8);
    }

    private static String nested(int depth) {
        return "[".repeat(depth) + "]".repeat(depth);
    }

    private static Path clean(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.delete(p);
                }
            }
        }
        return Files.createDirectories(dir);
    }

    private static List<Path> list(Path dir, String exclude) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".json"))
                    .filter(p -> !p.getFileName().toString().equals(exclude))
                    .sorted().toList();
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }
}
