package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static spice.authority.os.windows.SdBuilder.ADMINS;
import static spice.authority.os.windows.SdBuilder.FULL;
import static spice.authority.os.windows.SdBuilder.SYSTEM;
import static spice.authority.os.windows.SdBuilder.USER;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The binary self-relative parser: what it reads, and that every malformed input fails closed. */
class SecurityDescriptorTest {

    private static SecurityDescriptor parse(byte[] b) throws MalformedDescriptorException {
        return SecurityDescriptor.parse(b);
    }

    private static String malformed(byte[] b) {
        MalformedDescriptorException e = catchThrowableOfType(MalformedDescriptorException.class, () -> parse(b));
        assertThat(e).as("must be refused as malformed").isNotNull();
        return e.reason();
    }

    @Test
    void parse_readsOwnerGroupControlAndAces() throws Exception {
        byte[] b = new SdBuilder().owner(USER).group(SYSTEM).protect()
                .allow(SdBuilder.OI | SdBuilder.CI, FULL, USER)
                .deny(SdBuilder.ID, 0x00010000, ADMINS)
                .ace(0x11, 0, 0x1, SYSTEM)
                .build();
        SecurityDescriptor sd = parse(b);
        assertThat(sd.owner()).hasToString(USER);
        assertThat(sd.group()).hasToString(SYSTEM);
        assertThat(sd.daclProtected()).isTrue();
        assertThat(sd.nullDacl()).isFalse();
        assertThat(sd.dacl().revision()).isEqualTo(2);
        List<SecurityDescriptor.Ace> aces = sd.dacl().aces();
        assertThat(aces).hasSize(3);
        assertThat(aces.get(0)).isEqualTo(new SecurityDescriptor.Ace(0, 0x03, FULL, Sid.parse(USER)));
        assertThat(aces.get(1).denied()).isTrue();
        assertThat(aces.get(1).inherited()).isTrue();
        assertThat(aces.get(1).mask()).isEqualTo(0x00010000);
        assertThat(aces.get(2)).isEqualTo(new SecurityDescriptor.Ace(0x11, 0, 0, null));
    }

    @Test
    void parse_nullAndAbsentDacl() throws Exception {
        SecurityDescriptor nul = parse(SdBuilder.leaf().nullDacl().build());
        assertThat(nul.daclPresent()).isTrue();
        assertThat(nul.dacl()).isNull();
        assertThat(nul.nullDacl()).isTrue();
        SecurityDescriptor absent = parse(SdBuilder.leaf().control(0x8000).build());
        assertThat(absent.daclPresent()).isFalse();
        assertThat(absent.nullDacl()).isTrue();
    }

    @Test
    void parse_emptyDaclIsNotNull() throws Exception {
        SecurityDescriptor sd = parse(new SdBuilder().owner(USER).protect().build());
        assertThat(sd.nullDacl()).isFalse();
        assertThat(sd.dacl().aces()).isEmpty();
    }

    @Test
    void parse_aclRevisionDs() throws Exception {
        assertThat(parse(SdBuilder.leaf().aclRevision(4).build()).dacl().revision()).isEqualTo(4);
    }

    /** O:S-1-5-21-1-2-3-1001 D:P(A;;FA;;;S-1-5-21-1-2-3-1001), byte for byte. */
    @Test
    void userOnly_matchesHandEncodedVector() {
        String expected = ""
                + "0100" + "0490" // revision 1, sbz1, control 0x9004: SELF_RELATIVE|DACL_PROTECTED|DACL_PRESENT
                + "14000000" + "00000000" + "00000000" + "30000000" // owner 20, group 0, sacl 0, dacl 48
                + "010500000000000515000000010000000200000003000000e9030000" // owner SID: 5 sub-authorities, 28 bytes
                + "0200" + "2c00" + "0100" + "0000" // ACL rev 2, size 44, 1 ACE
                + "0000" + "2400" + "ff011f00" // ACCESS_ALLOWED, flags 0, size 36, FILE_ALL_ACCESS
                + "010500000000000515000000010000000200000003000000e9030000";
        assertThat(HexFormat.of().formatHex(SecurityDescriptor.userOnly(Sid.parse("S-1-5-21-1-2-3-1001"))))
                .isEqualTo(expected);
    }

    @Test
    void sid_textAndBinaryRoundTrip() throws Exception {
        for (String s : List.of(USER, SYSTEM, ADMINS, SdBuilder.TRUSTED_INSTALLER, "S-1-0-0", "S-1-16-12288",
                "S-1-281474976710655-4294967295")) {
            Sid sid = Sid.parse(s);
            assertThat(sid).hasToString(s);
            assertThat(sid.binary()).isEqualTo(SdBuilder.sid(s));
            assertThat(Sid.fromBinary(SdBuilder.sid(s))).isEqualTo(sid);
        }
        assertThatThrownBy(() -> Sid.parse("S-2-5")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sid.parse("S-1-5-4294967296")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sid.fromBinary(Arrays.copyOf(SdBuilder.sid(SYSTEM), 13)))
                .isInstanceOf(MalformedDescriptorException.class);
    }

    // ---- malformed: each case breaks one rule of an otherwise valid descriptor ----

    private static byte[] valid() {
        return new SdBuilder().owner(USER).group(SYSTEM).protect().allow(0, FULL, USER).allow(0, FULL, SYSTEM).build();
    }

    /** Offsets in {@link #valid()}: owner at 20 (28 bytes), group at 48 (12), DACL at 60. */
    private static final int DACL = 60;

    private static byte[] with(int offset, int... bytes) {
        byte[] b = valid();
        for (int i = 0; i < bytes.length; i++) {
            b[offset + i] = (byte) bytes[i];
        }
        return b;
    }

    @Test
    void valid_parses() throws Exception {
        SecurityDescriptor sd = parse(valid());
        assertThat(sd.owner()).hasToString(USER);
        assertThat(sd.group()).hasToString(SYSTEM);
        assertThat(sd.dacl().aces()).hasSize(2);
    }

    @Test
    void everyTruncation_malformed() {
        byte[] b = valid();
        for (int len = 0; len < b.length; len++) {
            assertThat(malformed(Arrays.copyOf(b, len))).as("truncated to %d bytes", len).isNotEmpty();
        }
    }

    @Test
    void nullInput_malformed() {
        assertThat(malformed(null)).isEqualTo("shorter than the 20-byte header");
    }

    @Test
    void descriptorRevision_malformed() {
        assertThat(malformed(with(0, 2))).isEqualTo("descriptor revision is not 1");
    }

    @Test
    void absoluteFormat_malformed() {
        assertThat(malformed(with(3, 0x10))).isEqualTo("not self-relative");
    }

    @Test
    void ownerOffsetInHeader_malformed() {
        assertThat(malformed(with(4, 8, 0, 0, 0))).isEqualTo("owner offset outside the descriptor");
    }

    @Test
    void ownerOffsetPastEnd_malformed() {
        assertThat(malformed(with(4, 0, 1, 0, 0))).isEqualTo("owner offset outside the descriptor");
    }

    @Test
    void ownerOffsetHugeUnsigned_malformed() {
        assertThat(malformed(with(4, 0xff, 0xff, 0xff, 0xff))).isEqualTo("owner offset outside the descriptor");
    }

    @Test
    void groupOffsetPastEnd_malformed() {
        assertThat(malformed(with(8, 0xff, 0, 0, 0))).isEqualTo("group offset outside the descriptor");
    }

    @Test
    void daclOffsetPastEnd_malformed() {
        assertThat(malformed(with(16, 0xff, 0, 0, 0))).isEqualTo("DACL offset outside the descriptor");
    }

    @Test
    void saclPresentButPastEnd_malformed() {
        byte[] b = with(12, 0xf0, 0, 0, 0);
        b[2] |= 0x10; // SE_SACL_PRESENT
        assertThat(malformed(b)).isEqualTo("SACL offset outside the descriptor");
    }

    @Test
    void sidRevision_malformed() {
        assertThat(malformed(with(20, 2))).isEqualTo("SID revision is not 1");
    }

    @Test
    void sidTooManySubAuthorities_malformed() {
        assertThat(malformed(with(21, 16))).isEqualTo("SID has more than 15 sub-authorities");
    }

    @Test
    void sidPastEnd_malformed() {
        // header and owner only (48 bytes); the owner SID claims 6 sub-authorities: 20 + 32 > 48
        byte[] b = new SdBuilder().owner(USER).control(0x8000).build();
        assertThat(b).hasSize(48);
        b[21] = 6;
        assertThat(malformed(b)).isEqualTo("SID sub-authorities do not fit");
    }

    @Test
    void aclRevision_malformed() {
        assertThat(malformed(with(DACL, 3))).isEqualTo("unknown ACL revision 3");
    }

    @Test
    void aclSizeNotMultipleOfFour_malformed() {
        assertThat(malformed(with(DACL + 2, 0x3a))).startsWith("ACL size 58 ");
    }

    @Test
    void aclSizePastEnd_malformed() {
        assertThat(malformed(with(DACL + 2, 0x00, 0x01))).isEqualTo("ACL extends past the descriptor");
    }

    @Test
    void aceCountBeyondAcl_malformed() {
        assertThat(malformed(with(DACL + 4, 3))).isEqualTo("ACE 2 header does not fit in the ACL");
    }

    @Test
    void aceSizeTooSmall_malformed() {
        assertThat(malformed(with(DACL + 8 + 2, 4, 0))).isEqualTo("ACE 0 size 4 is not a multiple of 4 of at least 8");
    }

    @Test
    void aceSizeNotMultipleOfFour_malformed() {
        assertThat(malformed(with(DACL + 8 + 2, 34, 0))).startsWith("ACE 0 size 34 ");
    }

    @Test
    void aceSizePastAcl_malformed() {
        assertThat(malformed(with(DACL + 8 + 2, 0xfc, 0))).isEqualTo("ACE 0 extends past the ACL");
    }

    @Test
    void aceSidPastAce_malformed() {
        // the first ACE's SID claims 6 sub-authorities (32 bytes) inside a 36-byte ACE: 8 + 32 > 36
        assertThat(malformed(with(DACL + 8 + 9, 6))).isEqualTo("SID sub-authorities do not fit");
    }

    @Test
    void unknownAceTypeStillBoundsChecked_malformed() {
        assertThat(malformed(with(DACL + 8, 0x05, 0, 0xfc, 0))).isEqualTo("ACE 0 extends past the ACL");
    }

    /** Random corruption: never anything but a parse or a {@link MalformedDescriptorException}. */
    @Test
    void everySingleByteCorruption_parsesOrFailsClosed() {
        byte[] base = valid();
        List<String> failures = new ArrayList<>();
        int[] values = {0x00, 0x01, 0x02, 0x04, 0x0f, 0x10, 0x7f, 0x80, 0xfe, 0xff};
        for (int i = 0; i < base.length; i++) {
            for (int v : values) {
                byte[] b = base.clone();
                b[i] = (byte) v;
                try {
                    parse(b);
                } catch (MalformedDescriptorException expected) {
                    // fails closed
                } catch (RuntimeException e) {
                    failures.add("byte " + i + " = " + v + ": " + e);
                }
            }
        }
        assertThat(failures).isEmpty();
    }
}
