package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import spice.authority.os.ProcessWatcher.Liveness;

/**
 * The macOS tables and their decoders, on Linux: the documented layouts of {@code struct kevent},
 * {@code struct proc_bsdinfo} and {@code struct xucred} (from the macOS SDK headers, written here
 * as literal offsets), decoding from bytes built in the test, and the liveness decision given an
 * answer or an errno. That the headers of a Mac agree is {@code DarwinProbeTest}'s job.
 */
class DarwinLayoutTest {

    private static final String[] MACS = {"macos-x86_64", "macos-aarch64"};

    private static DarwinLayout layout(String name) {
        return DarwinLayout.of(PosixPlatform.forName(name).orElseThrow());
    }

    @Test
    void bothMacTables_haveTheDocumentedLayouts_andAgree() {
        Map<String, Long> x86 = PosixPlatform.forName("macos-x86_64").orElseThrow().darwinConstants();
        Map<String, Long> arm = PosixPlatform.forName("macos-aarch64").orElseThrow().darwinConstants();
        assertThat(x86).as("LP64 on both: no #pragma pack difference").isEqualTo(arm);
        assertThat(arm).containsEntry("sizeof.struct_kevent", 32L)
                .containsEntry("offsetof.kevent.ident", 0L).containsEntry("offsetof.kevent.filter", 8L)
                .containsEntry("offsetof.kevent.flags", 10L).containsEntry("offsetof.kevent.fflags", 12L)
                .containsEntry("offsetof.kevent.data", 16L).containsEntry("offsetof.kevent.udata", 24L)
                .containsEntry("sizeof.struct_proc_bsdinfo", 136L)
                .containsEntry("offsetof.proc_bsdinfo.pbi_pid", 12L)
                .containsEntry("offsetof.proc_bsdinfo.pbi_ppid", 16L)
                .containsEntry("offsetof.proc_bsdinfo.pbi_ruid", 28L)
                .containsEntry("offsetof.proc_bsdinfo.pbi_start_tvsec", 120L)
                .containsEntry("offsetof.proc_bsdinfo.pbi_start_tvusec", 128L)
                .containsEntry("sizeof.struct_xucred", 76L)
                .containsEntry("offsetof.xucred.cr_uid", 4L)
                .containsEntry("EVFILT_PROC", -5L).containsEntry("NOTE_EXIT", 0x80000000L)
                .containsEntry("EV_RECEIPT", 0x40L).containsEntry("EV_ERROR", 0x4000L)
                .containsEntry("PROC_PIDTBSDINFO", 3L).containsEntry("SZOMB", 5L)
                .containsEntry("SOL_LOCAL", 0L).containsEntry("LOCAL_PEERCRED", 1L).containsEntry("LOCAL_PEERPID", 2L);
        for (String mac : MACS) {
            PosixPlatform p = PosixPlatform.forName(mac).orElseThrow();
            assertThat(p.hasKqueue()).isTrue();
            assertThat(p.hasPidfd()).isFalse();
            assertThat(DarwinLayout.of(p).keventSize).isEqualTo(32);
        }
    }

    @Test
    void linuxTables_haveNoDarwinLayout() {
        for (String linux : new String[] {"linux-x86_64", "linux-aarch64"}) {
            PosixPlatform p = PosixPlatform.forName(linux).orElseThrow();
            assertThat(p.hasKqueue()).isFalse();
            assertThat(p.darwinConstants()).isEmpty();
            assertThatThrownBy(() -> DarwinLayout.of(p)).isInstanceOf(IllegalStateException.class);
        }
    }

    /** Every struct's members lie inside it, aligned, without overlap (the constructor checks it; this lists them). */
    @Test
    void everyStruct_membersInside_aligned_nonOverlapping() {
        Map<String, Long> c = PosixPlatform.forName("macos-aarch64").orElseThrow().darwinConstants();
        for (String struct : new String[] {"kevent", "proc_bsdinfo", "xucred"}) {
            long size = c.get("sizeof.struct_" + struct);
            List<long[]> members = new ArrayList<>();
            c.forEach((k, v) -> {
                if (k.startsWith("offsetof." + struct + ".")) {
                    String m = k.substring(("offsetof." + struct + ".").length());
                    members.add(new long[] {v, c.get("sizeof." + struct + "." + m)});
                }
            });
            assertThat(members).as(struct).isNotEmpty();
            members.sort((a, b) -> Long.compare(a[0], b[0]));
            long end = 0;
            for (long[] m : members) {
                assertThat(m[0]).as("%s member at %d overlaps", struct, m[0]).isGreaterThanOrEqualTo(end);
                assertThat(m[0] % m[1]).as("%s member at %d aligned", struct, m[0]).isZero();
                end = m[0] + m[1];
            }
            assertThat(end).as(struct).isLessThanOrEqualTo(size);
        }
    }

    @Test
    void overlappingTable_isRefusedAtConstruction() throws Exception {
        // A table whose pbi_ppid overlaps pbi_pid must not be read as garbage.
        var ctor = DarwinLayout.class.getDeclaredConstructor(String.class, Map.class);
        ctor.setAccessible(true);
        Map<String, Long> bad = new java.util.HashMap<>(PosixPlatform.forName("macos-aarch64").orElseThrow().darwinConstants());
        bad.put("offsetof.proc_bsdinfo.pbi_ppid", 12L);
        assertThatThrownBy(() -> {
            try {
                ctor.newInstance("bad", bad);
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
            }
        }).isInstanceOf(IllegalStateException.class).hasMessageContaining("proc_bsdinfo");
    }

    @Test
    void kevent_decodesTheDocumentedBytes_andEncodesThemBack() {
        for (String mac : MACS) {
            DarwinLayout l = layout(mac);
            byte[] b = new byte[2 * 32];
            ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
            int base = 32; // the second struct
            bb.putLong(base, 4711);                  // ident
            bb.putShort(base + 8, (short) -5);        // filter EVFILT_PROC
            bb.putShort(base + 10, (short) 0xC010);   // flags EV_EOF|EV_ERROR|EV_ONESHOT (unsigned)
            bb.putInt(base + 12, 0x80000000);         // fflags NOTE_EXIT (unsigned)
            bb.putLong(base + 16, 3);                 // data
            bb.putLong(base + 24, -1);                // udata
            DarwinLayout.KEvent ev = l.decodeKevent(b, 1);
            assertThat(ev).isEqualTo(new DarwinLayout.KEvent(4711, (short) -5, 0xC010, 0x80000000L, 3, -1));
            assertThat(ev.flags() & l.EV_ERROR).isNotZero();
            byte[] again = new byte[2 * 32];
            l.encode(ev, again, 1);
            assertThat(again).isEqualTo(b);
            assertThat(l.procExit(9, l.EV_ADD)).isEqualTo(new DarwinLayout.KEvent(9, (short) -5, 1, 0x80000000L, 0, 0));
        }
    }

    @Test
    void procBsdinfo_decodesTheDocumentedBytes() {
        DarwinLayout l = layout("macos-x86_64");
        byte[] b = new byte[136];
        FakeDarwin.bsdinfo(b, 812, 1, 501, 502, 0x10, 2, 1_733_000_000L, 999_999);
        DarwinLayout.BsdInfo info = l.decodeBsdInfo(b, 136);
        assertThat(info.pid()).isEqualTo(812);
        assertThat(info.ppid()).isEqualTo(1);
        assertThat(info.uid()).isEqualTo(501);
        assertThat(info.ruid()).isEqualTo(502);
        assertThat(info.status()).isEqualTo(2);
        assertThat(info.startTime()).isEqualTo(1_733_000_000_999_999L);
        assertThat(l.exited(info)).isFalse();
        assertThat(l.exited(new DarwinLayout.BsdInfo(1, 1, 1, 1, 0, 5, 1))).as("SZOMB").isTrue();
        assertThat(l.exited(new DarwinLayout.BsdInfo(1, 1, 1, 1, 0x14, 2, 1))).as("PROC_FLAG_INEXIT").isTrue();
    }

    @Test
    void procBsdinfo_shortOrOutOfRange_failsClosed() {
        DarwinLayout l = layout("macos-aarch64");
        byte[] b = new byte[136];
        FakeDarwin.bsdinfo(b, 812, 1, 501, 501, 0, 2, 10, 20);
        assertThat(l.decodeBsdInfo(b, 135)).as("short answer").isNull();
        assertThat(l.decodeBsdInfo(b, 0)).isNull();
        assertThat(l.decodeBsdInfo(new byte[100], 136)).isNull();
        FakeDarwin.bsdinfo(b, 812, 1, 501, 501, 0, 2, 10, 1_000_000);
        assertThat(l.decodeBsdInfo(b, 136).startTime()).as("usec out of range").isEqualTo(DarwinLayout.MALFORMED);
        FakeDarwin.bsdinfo(b, 812, 1, 501, 501, 0, 2, -1, 0);
        assertThat(l.decodeBsdInfo(b, 136).startTime()).as("sec with the top bit set").isEqualTo(DarwinLayout.MALFORMED);
        FakeDarwin.bsdinfo(b, 0xFFFF_FFF0L, 1, 0xFFFF_FFFEL, 0xFFFF_FFFEL, 0, 2, 1, 0);
        DarwinLayout.BsdInfo u = l.decodeBsdInfo(b, 136);
        assertThat(u.pid()).as("unsigned").isEqualTo(0xFFFF_FFF0L);
        assertThat(u.ruid()).isEqualTo(0xFFFF_FFFEL);
    }

    @Test
    void xucred_decodesVersionZeroOnly() {
        DarwinLayout l = layout("macos-aarch64");
        byte[] b = new byte[76];
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(0, 0);             // cr_version XUCRED_VERSION
        bb.putInt(4, 501);           // cr_uid
        bb.putShort(8, (short) 3);   // cr_ngroups
        bb.putInt(12, 20);           // cr_groups[0]
        assertThat(l.decodeXucred(b, 76)).isEqualTo(new DarwinLayout.XuCred(0, 501, 3));
        assertThat(l.decodeXucred(b, 4)).as("4 bytes: what SO_DEBUG would answer").isNull();
        assertThat(l.decodeXucred(b, 75)).isNull();
        bb.putInt(0, 1);
        assertThat(l.decodeXucred(b, 76)).as("unknown cr_version").isNull();
    }

    @Test
    void peerPid_positiveAndWholeOnly() {
        DarwinLayout l = layout("macos-aarch64");
        byte[] b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 3141).array();
        assertThat(l.decodePid(b, 4)).isEqualTo(3141);
        assertThat(l.decodePid(b, 2)).isEqualTo(DarwinLayout.MALFORMED);
        assertThat(l.decodePid(new byte[4], 4)).as("pid 0").isEqualTo(DarwinLayout.MALFORMED);
        assertThat(l.decodePid(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, -7).array(), 4))
                .isEqualTo(DarwinLayout.MALFORMED);
    }

    @Test
    void decide_onlyEsrchExitAndAnotherStartTime_proveDeath() {
        DarwinLayout l = layout("macos-aarch64");
        int esrch = 3;
        DarwinLayout.BsdInfo alive = new DarwinLayout.BsdInfo(77, 1, 501, 501, 0x10, 2, 1000);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000, alive, 0)).isEqualTo(Liveness.ALIVE);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1001, alive, 0)).as("another start time").isEqualTo(Liveness.DEAD);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000, null, esrch)).as("ESRCH").isEqualTo(Liveness.DEAD);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000,
                new DarwinLayout.BsdInfo(77, 1, 501, 501, 0, 5, 1000), 0)).as("zombie").isEqualTo(Liveness.DEAD);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000,
                new DarwinLayout.BsdInfo(77, 1, 501, 501, 4, 2, 1000), 0)).as("in exit").isEqualTo(Liveness.DEAD);
        for (int errno : new int[] {0, 1, 4, 12, 13, 22, 24, 35}) { // EPERM EINTR ENOMEM EACCES EINVAL EMFILE EAGAIN
            assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000, null, errno)).as("errno %d", errno)
                    .isEqualTo(Liveness.UNKNOWN);
        }
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000,
                new DarwinLayout.BsdInfo(78, 1, 501, 501, 0, 2, 1000), 0)).as("an answer about another pid").isEqualTo(Liveness.UNKNOWN);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 77, 1000,
                new DarwinLayout.BsdInfo(77, 1, 501, 501, 0, 2, DarwinLayout.MALFORMED), 0)).isEqualTo(Liveness.UNKNOWN);
        assertThat(KqueueProcessWatcher.decide(l, esrch, 0, 1000, alive, 0)).as("invalid pid").isEqualTo(Liveness.DEAD);
    }
}
