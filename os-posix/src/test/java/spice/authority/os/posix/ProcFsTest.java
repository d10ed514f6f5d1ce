package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The /proc parsers on hostile strings; no process needed. */
class ProcFsTest {

    /** Fields 3..52 after the comm, with starttime (field 22) = 987654. */
    private static String tail(char state) {
        StringBuilder b = new StringBuilder().append(state);
        for (int field = 4; field <= 52; field++) {
            b.append(' ').append(field == 22 ? "987654" : Integer.toString(field * 10));
        }
        return b.append('\n').toString();
    }

    @Test
    void parseStartTime_plainComm_readsField22() {
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('S'))).hasValue(987654);
    }

    @Test
    void parseStartTime_commWithSpacesAndParens_parsesFromLastParen() {
        assertThat(ProcFs.parseStartTime("123 (a) b)) c) " + tail('S'))).hasValue(987654);
        assertThat(ProcFs.parseStartTime("123 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19) " + tail('R')))
                .as("a comm forging a whole fake stat line").hasValue(987654);
        assertThat(ProcFs.parseStartTime("123 () " + tail('S'))).hasValue(987654);
        assertThat(ProcFs.parseStartTime("123 ( ( ) " + tail('D'))).hasValue(987654);
    }

    @Test
    void parseStartTime_zombieOrDead_isEmpty() {
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('Z'))).isEmpty();
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('X'))).isEmpty();
    }

    @Test
    void parseStartTime_malformed_isEmpty() {
        assertThat(ProcFs.parseStartTime("")).isEmpty();
        assertThat(ProcFs.parseStartTime("123 sleep S 1 2 3")).isEmpty();
        assertThat(ProcFs.parseStartTime("123 (sleep) S 1 2 3")).as("too few fields").isEmpty();
        assertThat(ProcFs.parseStartTime("123 )sleep( " + tail('S'))).isEmpty();
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('S').replace("987654", "-1"))).isEmpty();
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('S').replace("987654", "99999999999999999999")))
                .isEmpty();
    }

    @Test
    void parseRealUid_readsFirstUidColumn() {
        String status = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n";
        assertThat(ProcFs.parseRealUid(status)).hasValue(1000);
        assertThat(ProcFs.parseRealUid("Name:\tx\\nUid:\t0\t0\t0\t0\nUid:\t42\t42\t42\t42\n"))
                .as("escaped newline in Name is not a line").hasValue(42);
        assertThat(ProcFs.parseRealUid("Name:\tx\nGid:\t0\t0\t0\t0\n")).isEmpty();
        assertThat(ProcFs.parseRealUid("Uid:\tx\t0\t0\t0\n")).isEmpty();
    }

    @Test
    void invalidPids_areNoSuchProcess() {
        for (long pid : new long[] {0, -1, Long.MIN_VALUE, 1L << 40}) {
            assertThat(ProcFs.startTime(pid)).isEqualTo(OptionalLong.empty());
            assertThat(ProcFs.realUid(pid)).isEqualTo(OptionalLong.empty());
        }
    }
}
