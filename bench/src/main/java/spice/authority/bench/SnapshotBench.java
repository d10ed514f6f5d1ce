package spice.authority.bench;

import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.SecretAccess;
import spice.authority.snapshot.crypto.SecretKeyBytes;
import spice.authority.snapshot.crypto.VerificationException;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.envelope.EnvelopeRejectedException;
import spice.authority.snapshot.envelope.Envelopes;
import spice.authority.snapshot.envelope.SigningException;
import spice.authority.snapshot.payload.PayloadRejectedException;
import spice.authority.snapshot.payload.Snapshot;

/**
 * The snapshot hot paths beside a bare SHA-256 over the same payload bytes, in the same run:
 *
 * <ul>
 *   <li>{@code decode}: {@link Snapshot#decode} (parse, every b.3–b.6 rule, canonical re-encode and
 *       compare);
 *   <li>{@code sign}: what {@code POST /v1/runs/{id}/snapshots} does to the bytes: decode, then
 *       {@link Envelopes#seal} (SHA-256, canonical MAC input, HMAC-SHA256, envelope build) and the
 *       binary encoding;
 *   <li>{@code verify}: what {@code POST /v1/imports} does: {@link Envelope#parse},
 *       {@link Envelopes#validateStrict} (a.3 digest and lenient run ID, then the full payload
 *       decode) and keyed {@link Envelopes#verify};
 *   <li>{@code sha256}: {@link MessageDigest} SHA-256 over the payload, the baseline.
 * </ul>
 *
 * <p>Payloads ({@code size}): {@code 15k} is a 50-message airline-support conversation with 10
 * tool call/result pairs (about 15 KB); {@code 2m} is the same kind of conversation grown to 2 MiB.
 * Both are generated deterministically by {@link SnapshotPayloads}. Run with
 * {@code bench/run SnapshotBench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SnapshotBench {

    @Param({"15k", "2m"})
    public String size;

    private byte[] payload;
    private byte[] envelope;
    private AuthorityKey key;
    private MessageDigest sha256;

    @Setup
    public void setUp() throws Exception {
        payload = switch (size) {
            case "15k" -> SnapshotPayloads.fiftyMessages();
            case "2m" -> SnapshotPayloads.twoMebibytes();
            default -> throw new IllegalArgumentException("size: 15k or 2m");
        };
        byte[] scope = new byte[32];
        Arrays.fill(scope, (byte) 0x5a);
        byte[] raw = new byte[32];
        Arrays.fill(raw, (byte) 0x2c);
        try (SecretKeyBytes k = SecretKeyBytes.copyOf(raw, SecretAccess.grant())) {
            key = new AuthorityKey(scope, 1, k);
        }
        Arrays.fill(raw, (byte) 0);
        sha256 = MessageDigest.getInstance("SHA-256");
        envelope = sign();
        verify(); // the set-up is only valid if the signed envelope verifies
        System.out.printf("%n[SnapshotBench] size=%s payload=%d bytes, %d messages; envelope=%d bytes%n", size,
                payload.length, Snapshot.decode(payload).history().size(), envelope.length);
    }

    @TearDown
    public void tearDown() {
        key.close();
    }

    @Benchmark
    public Snapshot decode() throws PayloadRejectedException {
        return Snapshot.decode(payload);
    }

    @Benchmark
    public byte[] sign() throws PayloadRejectedException, SigningException {
        Snapshot s = Snapshot.decode(payload);
        return Envelopes.seal(s, key::sign).toBinary();
    }

    @Benchmark
    public Snapshot verify() throws EnvelopeRejectedException, VerificationException {
        Envelope e = Envelope.parse(envelope);
        Envelopes.Strict strict = Envelopes.validateStrict(e);
        Envelopes.verify(strict.validated(), key::verify);
        return strict.snapshot();
    }

    @Benchmark
    public byte[] sha256() {
        return sha256.digest(payload);
    }
}
