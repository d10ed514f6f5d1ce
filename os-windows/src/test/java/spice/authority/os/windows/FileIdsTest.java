package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.FileIdentity;

/** FILE_ID_INFO to the SPI identity: injective where accepted, refused where identity cannot be proven. */
class FileIdsTest {

    private static byte[] info(long serial, long low, long high) {
        return ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN).putLong(serial).putLong(low).putLong(high).array();
    }

    @Test
    void ntfsId_mapsToSerialAndLow64() throws Exception {
        assertThat(FileIds.identity(info(0x1234_5678_9abc_def0L, 0x0005_0000_0000_1234L, 0)))
                .isEqualTo(new FileIdentity(0x1234_5678_9abc_def0L, 0x0005_0000_0000_1234L));
        assertThat(FileIds.identity(info(-1, Long.MIN_VALUE, 0))).isEqualTo(new FileIdentity(-1, Long.MIN_VALUE));
    }

    @Test
    void zeroId_refused() {
        RuleViolation v = catchThrowableOfType(RuleViolation.class, () -> FileIds.identity(info(42, 0, 0)));
        assertThat(v.rule()).isEqualTo(DaclRule.ID_ZERO);
        assertThat(v.refusal("C:\\a\\identity.key").category()).isEqualTo(Category.IDENTITY);
        assertThat(v.getMessage()).startsWith("W-ID-ZERO: ");
    }

    @Test
    void invalidId_refused() {
        assertThat(catchThrowableOfType(RuleViolation.class, () -> FileIds.identity(info(42, -1, 0))).rule())
                .isEqualTo(DaclRule.ID_INVALID);
        assertThat(catchThrowableOfType(RuleViolation.class, () -> FileIds.identity(info(42, -1, -1))).rule())
                .isEqualTo(DaclRule.ID_INVALID);
    }

    /** Two ReFS ids that differ only in the high half are two identities: the id is kept whole. */
    @Test
    void wideId_keptWhole_neverFolded() throws Exception {
        FileIdentity a = FileIds.identity(info(42, 7, 1));
        FileIdentity b = FileIds.identity(info(42, 7, 2));
        FileIdentity c = FileIds.identity(info(42, 0, 1)); // low half 0: still a non-zero id
        assertThat(a).isEqualTo(new FileIdentity(42, 7, 1));
        assertThat(a).isNotEqualTo(b).isNotEqualTo(new FileIdentity(42, 7));
        assertThat(c).isEqualTo(new FileIdentity(42, 0, 1));
        assertThat(FileIds.identity(info(42, -1, Long.MIN_VALUE))).isEqualTo(new FileIdentity(42, -1, Long.MIN_VALUE));
        assertThat(a.toString()).isEqualTo("42:0x00000000000000010000000000000007");
        assertThat(FileIds.identity(info(42, 7, 0)).inodeHigh()).isZero();
    }

    @Test
    void wrongLength_rejected() {
        assertThatThrownBy(() -> FileIds.identity(new byte[16])).isInstanceOf(IllegalArgumentException.class);
    }
}
