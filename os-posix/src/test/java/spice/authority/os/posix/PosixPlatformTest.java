package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The static platform tables. The native probe test checks the current one against C. */
class PosixPlatformTest {

    @Test
    void key_mapsJavaPropertiesToTableNames() {
        assertThat(PosixPlatform.key("Linux", "amd64")).isEqualTo("linux-x86_64");
        assertThat(PosixPlatform.key("Linux", "aarch64")).isEqualTo("linux-aarch64");
        assertThat(PosixPlatform.key("Mac OS X", "x86_64")).isEqualTo("macos-x86_64");
        assertThat(PosixPlatform.key("Mac OS X", "aarch64")).isEqualTo("macos-aarch64");
    }

    @Test
    void unsupportedPlatforms_haveNoTable() {
        assertThat(PosixPlatform.forName(PosixPlatform.key("FreeBSD", "amd64"))).isEmpty();
        assertThat(PosixPlatform.forName(PosixPlatform.key("Linux", "riscv64"))).isEmpty();
        assertThat(PosixPlatform.forName(PosixPlatform.key("Windows 11", "amd64"))).isEmpty();
        assertThat(PosixPlatform.forName(PosixPlatform.key(null, null))).isEmpty();
    }

    @Test
    void everySupportedTable_isComplete() {
        for (String name : new String[] {"linux-x86_64", "linux-aarch64", "macos-x86_64", "macos-aarch64"}) {
            PosixPlatform p = PosixPlatform.forName(name).orElseThrow();
            assertThat(p.name).isEqualTo(name);
            Map<String, Long> c = p.constants();
            assertThat(c).containsKeys("O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC", "AT_FDCWD", "ELOOP", "EWOULDBLOCK",
                    "sizeof.struct_stat", "offsetof.stat.st_nlink");
            // the fields os-posix reads must lie inside the struct
            for (PosixPlatform.Field f : new PosixPlatform.Field[] {p.stDev, p.stIno, p.stMode, p.stNlink, p.stUid,
                    p.stGid, p.stSize}) {
                assertThat(f.offset() + f.size()).isLessThanOrEqualTo(p.statSize);
                assertThat(f.offset() % f.size()).as("aligned").isZero();
            }
        }
    }

    @Test
    void linuxX8664_glibcLayout_nlinkBeforeMode() {
        PosixPlatform p = PosixPlatform.forName("linux-x86_64").orElseThrow();
        assertThat(p.stDev).isEqualTo(new PosixPlatform.Field(0, 8));
        assertThat(p.stIno).isEqualTo(new PosixPlatform.Field(8, 8));
        assertThat(p.stNlink).isEqualTo(new PosixPlatform.Field(16, 8));
        assertThat(p.stMode).isEqualTo(new PosixPlatform.Field(24, 4));
        assertThat(p.stUid).isEqualTo(new PosixPlatform.Field(28, 4));
        assertThat(p.stGid).isEqualTo(new PosixPlatform.Field(32, 4));
        assertThat(p.O_DIRECTORY).isEqualTo(0200000);
        assertThat(p.O_NOFOLLOW).isEqualTo(0400000);
    }

    @Test
    void platformsDiffer_whereTheHeadersDiffer() {
        PosixPlatform x86 = PosixPlatform.forName("linux-x86_64").orElseThrow();
        PosixPlatform arm = PosixPlatform.forName("linux-aarch64").orElseThrow();
        PosixPlatform mac = PosixPlatform.forName("macos-aarch64").orElseThrow();
        PosixPlatform macIntel = PosixPlatform.forName("macos-x86_64").orElseThrow();
        assertThat(arm.O_DIRECTORY).isNotEqualTo(x86.O_DIRECTORY);
        assertThat(arm.stMode.offset()).isLessThan(arm.stNlink.offset());
        assertThat(mac.ELOOP).isEqualTo(62);
        assertThat(mac.EWOULDBLOCK).isEqualTo(35);
        assertThat(mac.sizeofModeT).isEqualTo(2);
        assertThat(mac.overflowUid).isEqualTo(-1);
        assertThat(macIntel.fstatSymbol).isEqualTo("fstat$INODE64");
        assertThat(mac.fstatSymbol).isEqualTo("fstat");
    }

    @Test
    void errnoName_namesKnownValues() {
        PosixPlatform p = PosixPlatform.forName("linux-x86_64").orElseThrow();
        assertThat(p.errnoName(2)).isEqualTo("ENOENT");
        assertThat(p.errnoName(11)).isEqualTo("EAGAIN");
        assertThat(p.errnoName(9999)).isEqualTo("errno 9999");
    }
}
