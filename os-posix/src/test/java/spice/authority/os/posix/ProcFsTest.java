package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatchException;

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
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('S'))).isEqualTo(987654L);
    }

    @Test
    void parseStartTime_commWithSpacesAndParens_parsesFromLastParen() {
        assertThat(ProcFs.parseStartTime("123 (a) b)) c) " + tail('S'))).isEqualTo(987654L);
        assertThat(ProcFs.parseStartTime("123 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19) " + tail('R')))
                .as("a comm forging a whole fake stat line").isEqualTo(987654L);
        assertThat(ProcFs.parseStartTime("123 () " + tail('S'))).isEqualTo(987654L);
        assertThat(ProcFs.parseStartTime("123 ( ( ) " + tail('D'))).isEqualTo(987654L);
    }

    @Test
    void parseStartTime_zombieOrDead_isExited() {
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('Z'))).isEqualTo(ProcFs.EXITED);
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('X'))).isEqualTo(ProcFs.EXITED);
    }

    @Test
    void parseStartTime_malformed_isMalformedNotExited() {
        assertThat(ProcFs.parseStartTime("")).isEqualTo(ProcFs.MALFORMED);
        assertThat(ProcFs.parseStartTime("123 sleep S 1 2 3")).isEqualTo(ProcFs.MALFORMED);
        assertThat(ProcFs.parseStartTime("123 (sleep) S 1 2 3")).as("too few fields").isEqualTo(ProcFs.MALFORMED);
        assertThat(ProcFs.parseStartTime("123 )sleep( " + tail('S'))).isEqualTo(ProcFs.MALFORMED);
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('S').replace("987654", "-1"))).isEqualTo(ProcFs.MALFORMED);
        assertThat(ProcFs.parseStartTime("123 (sleep) " + tail('S').replace("987654", "99999999999999999999"))).isEqualTo(ProcFs.MALFORMED);
    }

    @Test
    void parseRealUid_readsFirstUidColumn() {
        String status = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n";
        assertThat(ProcFs.parseRealUid(status)).isEqualTo(1000L);
        assertThat(ProcFs.parseRealUid("Name:\tx\\nUid:\t0\t0\t0\t0\nUid:\t42\t42\t42\t42\n"))
                .as("escaped newline in Name is not a line").isEqualTo(42L);
        assertThat(ProcFs.parseRealUid("Name:\tx\nGid:\t0\t0\t0\t0\n")).isEqualTo(ProcFs.MALFORMED);
        assertThat(ProcFs.parseRealUid("Uid:\tx\t0\t0\t0\n")).isEqualTo(ProcFs.MALFORMED);
    }

    @Test
    void invalidPids_areNoSuchProcess() throws Exception {
        for (long pid : new long[] {0, -1, Long.MIN_VALUE, 1L << 40}) {
            assertThat(ProcFs.startTime(pid)).isEqualTo(OptionalLong.empty());
            assertThat(ProcFs.realUid(pid)).isEqualTo(OptionalLong.empty());
        }
    }

    @Test
    void livePid_andExitedPid_areReadAsSuch() throws Exception {
        long self = ProcessHandle.current().pid();
        assertThat(ProcFs.startTime(self)).isPresent();
        assertThat(ProcFs.realUid(self)).hasValue(Libc.geteuid());
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        assertThat(ProcFs.startTime(p.pid())).as("reaped: no /proc entry, a proof").isEmpty();
    }

    /**
     * Unknown is not dead: with every descriptor in use, reading /proc fails with EMFILE, and that
     * must surface as an exception, never as "no such process" (which would release a live
     * host's lease). Runs in a child JVM with a low descriptor limit, which it fills itself.
     */
    @Test
    void descriptorExhaustion_isUnknown_notAbsent() throws Exception {
        ChildJvm.Result r = ChildJvm.run(null, null, java.util.List.of("prlimit", "--nofile=256:256",
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:-UsePerfData",
                "-XX:-MaxFDLimit", "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                ExhaustedProbe.class.getName()));
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.out()).as(r.toString()).contains("startTime: unknown (cannot read /proc/").contains("EMFILE");
        assertThat(r.out()).as(r.toString()).contains("parentPid: unknown").contains("realUid: unknown");
        assertThat(r.out()).as(r.toString()).contains("after: alive");
    }

    /** Child: fills its descriptor table, then asks /proc about itself. */
    public static final class ExhaustedProbe {
        public static void main(String[] args) throws Exception {
            long self = ProcessHandle.current().pid();
            // Load every class the probe needs while descriptors remain (class loading opens jars).
            String warm = describe(() -> ProcFs.startTime(self)) + describe(() -> ProcFs.parentPid(self))
                    + describe(() -> ProcFs.realUid(self)) + new ProcessWatchException("warm-up").getMessage();
            try {
                ProcFs.startTime(-1);
                Libc.openat(Libc.P.AT_FDCWD, "/nonexistent-warm-up", Libc.P.O_RDONLY, 0);
            } catch (PosixException expected) {
                warm += expected.getMessage();
            }
            StringBuilder out = new StringBuilder(warm.length() > 0 ? "" : "?");
            java.util.List<java.io.FileInputStream> held = new java.util.ArrayList<>();
            try {
                while (true) {
                    held.add(new java.io.FileInputStream("/dev/null"));
                }
            } catch (java.io.IOException full) {
                // EMFILE reached
            }
            out.append("startTime: ").append(describe(() -> ProcFs.startTime(self))).append('\n');
            out.append("parentPid: ").append(describe(() -> ProcFs.parentPid(self))).append('\n');
            out.append("realUid: ").append(describe(() -> ProcFs.realUid(self))).append('\n');
            for (java.io.FileInputStream f : held) {
                f.close();
            }
            out.append("after: ").append(ProcFs.startTime(self).isPresent() ? "alive" : "absent").append('\n');
            System.out.print(out);
        }

        interface Probe {
            OptionalLong get() throws ProcessWatchException;
        }

        private static String describe(Probe p) {
            try {
                OptionalLong v = p.get();
                return v.isPresent() ? "present" : "absent";
            } catch (ProcessWatchException e) {
                return "unknown (" + e.getMessage() + ")";
            }
        }
    }
}
