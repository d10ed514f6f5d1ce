package spice.authority.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.ForwardingSecureDirectory;
import spice.authority.snapshot.RunId;
import spice.authority.snapshot.envelope.Envelope;

/**
 * Honest outcomes at import: prepare writes nothing, so a transient I/O failure while it reads
 * the record (EIO on a failing disk, EMFILE/ENFILE) provably changed nothing and is retryable:
 * {@code unavailable}, as {@code listRecords}, {@code start} and {@code abandon} answer the same
 * read failure, never {@code verification_failed}, the one body that says the envelope is not
 * authentic, which a host and an operator take for permanent.
 */
class ImportReadFailureTest {
    private static final Cancellation NONE = Cancellation.none();

    /** A directory whose reads of {@code runId}'s record fail with {@code category} while {@code fail[0]}. */
    private static ForwardingSecureDirectory failingRecordReads(String runId, Category category, boolean[] fail) {
        String record = RecordCodec.fileStem(runId) + ".state";
        return new ForwardingSecureDirectory(new MemoryDirectory()) {
            @Override
            public byte[] read(String name, int maxBytes) throws DirectoryRefusedException {
                if (fail[0] && name.equals(record)) {
                    throw new DirectoryRefusedException(category, path() + "/" + name, "read: " + category);
                }
                return super.read(name, maxBytes);
            }
        };
    }

    @Test
    void prepareImport_recordBreaksAFileRuleAsItIsRead_isAVerificationFailure_notRetryable() throws Exception {
        // An identity rule the record's file breaks (Windows: a zero or invalid file ID) is a file
        // rule like the others: verification_failed, as the reference answers, never "try again".
        boolean[] fail = {false};
        RunAuthority a = RunAuthority.open(failingRecordReads("run-id", Category.IDENTITY, fail), Fixtures.random());
        ActiveRun owner = a.start(new RunId("run-id"), NONE);
        Envelope env = owner.seal(Fixtures.suspended("run-id", 7), NONE).envelope();
        owner.close();
        fail[0] = true;
        assertThatThrownBy(() -> a.prepareImport(env, NONE)).isInstanceOf(AuthorityException.Verification.class);
    }

    @Test
    void prepareImport_recordReadFailsWithAnIoError_isUnavailableAndRetryable_notAVerificationFailure() throws Exception {
        boolean[] fail = {false};
        ForwardingSecureDirectory dir = failingRecordReads("run-eio", Category.IO, fail);
        RunAuthority a = RunAuthority.open(dir, Fixtures.random());
        ActiveRun owner = a.start(new RunId("run-eio"), NONE);
        Envelope env = owner.seal(Fixtures.suspended("run-eio", 7), NONE).envelope();
        owner.close();

        // The same read failure elsewhere is unavailable (retryable):
        fail[0] = true;
        assertThatThrownBy(() -> a.abandon(new RunId("run-eio"), NONE)).isInstanceOf(AuthorityException.Unavailable.class);
        // ... but at import it is reported as an authenticity failure.
        assertThatThrownBy(() -> a.prepareImport(env, NONE))
                .as("a read that failed with EIO proves nothing about the envelope: unavailable, retry")
                .isInstanceOf(AuthorityException.Unavailable.class);
        fail[0] = false;
        try (RunImport imp = a.prepareImport(env, NONE)) {
            assertThat(imp.sourceGeneration()).as("the same envelope imports once the disk answers").isEqualTo(1);
        }
    }
}
