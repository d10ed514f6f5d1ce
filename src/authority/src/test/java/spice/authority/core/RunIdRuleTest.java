package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.SpecFiles;
import spice.authority.snapshot.contract.RunPhase;
import spice.authority.snapshot.crypto.AuthorityKey;
import spice.authority.snapshot.crypto.Claim;
import spice.authority.snapshot.crypto.ClaimInput;
import spice.authority.snapshot.crypto.HmacSha256;
import spice.authority.snapshot.crypto.RunSubkey;
import spice.authority.snapshot.envelope.Envelope;
import spice.authority.snapshot.proto.SnapshotAuthority;
import spice.authority.snapshot.proto.SnapshotEnvelope;
import spice.authority.snapshot.proto.SnapshotLifecycle;

/**
 * One run-ID rule (ARCHITECTURE.md "stricter" point 3, {@link RunId}): the authority starts,
 * abandons, inspects and imports only run IDs of at most 96 UTF-8 bytes. The store still reads a
 * record under a wider ID (token(128), another implementation's), but only as foreign: never
 * acted upon, and never created.
 */
class RunIdRuleTest {
    private static final Cancellation NONE = Cancellation.none();
    private static final String ID_96 = "r".repeat(96);
    private static final String ID_96_EURO = "\u20AC".repeat(32);
    private static final String ID_97 = "r".repeat(97);
    private static final String ID_128 = "r".repeat(128);

    @Test
    void start_96Bytes_accepted_97BytesIsNoRunId_namingTheRule() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        for (String ok : List.of(ID_96, ID_96_EURO)) {
            try (ActiveRun r = a.start(new RunId(ok), NONE)) {
                // a run that was started can always be suspended: the payload rule is the same one
                r.seal(Fixtures.suspended(ok, 7), NONE);
            }
            assertThat(a.inspect(new RunId(ok))).map(RunRecord::phase).contains(RunPhase.SUSPENDED);
        }
        // The authority takes only a RunId: a wider ID is refused where the text is parsed.
        for (String refused : List.of(ID_97, "\u20AC".repeat(33), ID_128)) {
            assertThat(RunId.parse(refused)).isEmpty();
            assertThatThrownBy(() -> new RunId(refused)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(RunId.RULE);
        }
        assertThat(a.outstandingLeases()).isZero();
        a.close();
    }

    @Test
    void recordUnderA97ByteId_withAValidMac_isForeign_neverActedUpon() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        String state = RecordCodec.fileStem(ID_97) + ".state";
        try (AuthorityIdentity id = AuthorityIdentity.parse(dir.visibleFile(AuthorityIdentity.FILE_NAME));
             HmacSha256 recordMac = new HmacSha256(id.masterKey())) {
            // What a reference daemon sharing this scope may write: its store allows token(128).
            RunRecord wide = new RunRecord(a.scopeIdHex(), a.keyGeneration(), ID_97, 1, RunPhase.ACTIVE, null);
            dir.putFile(state, RecordCodec.signedFile(wide, recordMac));
            assertThat(RecordCodec.verifyFile(dir.visibleFile(state), recordMac)).as("the record format still reads it")
                    .isEqualTo(wide);
        }
        Map<String, byte[]> before = dir.snapshotFiles();

        assertThatThrownBy(() -> a.readStateFile(state)).as("a listing counts it unreadable")
                .isInstanceOf(AuthorityException.Verification.class);
        assertThat(a.listRecords().unreadable()).isEqualTo(1);
        assertThat(RunId.parse(ID_97)).as("no run ID to start, inspect or abandon it under").isEmpty();
        assertSameFiles(dir, before);
        a.close();
    }

    @Test
    void prepareImport_envelopeUnderA97ByteId_signedWithTheRealSubkey_refusedBeforeAnythingIsCreated() throws Exception {
        MemoryDirectory dir = new MemoryDirectory();
        RunAuthority a = Fixtures.open(dir);
        String payloadText = new String(SpecFiles.bytes("payload-corpus/public/valid-01-minimal-suspended.json"), StandardCharsets.UTF_8)
                .replace("\"run_id\":\"run-1\"", "\"run_id\":\"" + ID_97 + "\"");
        byte[] payload = payloadText.getBytes(StandardCharsets.UTF_8);
        byte[] digest = HmacSha256.sha256(payload);
        Claim claim;
        try (AuthorityIdentity id = AuthorityIdentity.parse(dir.visibleFile(AuthorityIdentity.FILE_NAME));
             HmacSha256 recordMac = new HmacSha256(id.masterKey());
             AuthorityKey key = RunSubkey.authorityFor(id.masterKey(), id.scopeId(), id.generation(), ID_97, 1)) {
            claim = key.sign(new ClaimInput(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, ID_97, 7, 1, digest));
            // A SUSPENDED record that binds exactly this claim: only the run-ID rule stands in the way.
            RunRecord wide = new RunRecord(a.scopeIdHex(), a.keyGeneration(), ID_97, 1, RunPhase.SUSPENDED,
                    new RunRecord.SnapshotBinding(spice.authority.snapshot.SnapshotFormat.V1ALPHA2, 7, 1, digest, claim.hmac()));
            dir.putFile(RecordCodec.fileStem(ID_97) + ".state", RecordCodec.signedFile(wide, recordMac));
        }
        Envelope env = Envelope.parse(SnapshotEnvelope.newBuilder()
                .setFormat(spice.authority.snapshot.SnapshotFormat.V1ALPHA2.wire()).setRunId(ID_97).setLastSequence(7)
                .setLifecycle(SnapshotLifecycle.SNAPSHOT_LIFECYCLE_SUSPENDED)
                .setPayload(ByteString.copyFrom(payload)).setSha256(ByteString.copyFrom(digest))
                .setAuthority(SnapshotAuthority.newBuilder().setScopeId(ByteString.copyFrom(claim.scopeId()))
                        .setGeneration(claim.generation()).setHmacSha256(ByteString.copyFrom(claim.hmac())))
                .build().toByteArray());
        Map<String, byte[]> before = dir.snapshotFiles();
        int writes = dir.writeCount();

        assertThatThrownBy(() -> a.prepareImport(env, NONE)).isInstanceOf(AuthorityException.Verification.class);

        assertSameFiles(dir, before);
        assertThat(dir.snapshotFiles()).as("no lock file").doesNotContainKey(RecordCodec.fileStem(ID_97) + ".lock");
        assertThat(dir.writeCount()).isEqualTo(writes);
        assertThat(a.outstandingLeases()).isZero();
        a.close();
    }

    private static void assertSameFiles(MemoryDirectory dir, Map<String, byte[]> before) {
        Map<String, byte[]> now = dir.snapshotFiles();
        assertThat(now.keySet()).as("directory listing").isEqualTo(before.keySet());
        for (String name : before.keySet()) {
            assertThat(now.get(name)).as(name).isEqualTo(before.get(name));
        }
    }
}
