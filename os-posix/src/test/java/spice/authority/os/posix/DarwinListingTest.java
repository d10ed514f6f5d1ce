package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static spice.authority.os.DirectoryRefusedException.Category.IO;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import spice.authority.os.DirectoryRefusedException;

/**
 * The macOS listing ({@code openat(".")}, {@code fdopendir}, {@code readdir_r}, {@code closedir})
 * against a simulated kernel ({@link FakeDarwinDirectory}), on Linux, for both macOS tables:
 * every name comes back or the listing is refused as a whole, the retained descriptor is never
 * handed to the stream, and every descriptor and stream is released exactly once, by the one
 * call that owns it. That the real libSystem behaves as simulated is {@code ListingMacTest}'s
 * job (macOS only; never run).
 */
class DarwinListingTest {

    private static final String SHOWN = "/Users/u/Library/Application Support/spice-agent/authority";

    private static List<String> list(FakeDarwinDirectory k) throws DirectoryRefusedException {
        return new DirectoryListing(k, k.mac).list(FakeDarwinDirectory.RETAINED, SHOWN);
    }

    private static DirectoryRefusedException refused(FakeDarwinDirectory k) {
        try {
            List<String> got = list(k);
            throw new AssertionError("expected a refusal, got a listing of " + got.size());
        } catch (DirectoryRefusedException e) {
            assertThat(e.category()).isEqualTo(IO);
            assertThat(e.component()).isEqualTo(SHOWN);
            return e;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64", "macos-x86_64"})
    void list_everyName_sorted_withoutDotAndDotDot_andEverythingReleasedOnce(String platform) throws Exception {
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform);
        String longest = "x".repeat(255);
        k.add("b.state").add(longest).add(".b.state.0123456789abcdef01234567.tmp").add("a.lock")
                .add(new byte[] {'a', (byte) 0xFF, 'b'}).add("z");
        assertThat(list(k)).containsExactly(".b.state.0123456789abcdef01234567.tmp", "a.lock", "a\uFFFDb", "b.state",
                longest, "z");
        assertThat(k.calls()).startsWith("openat", "fdopendir").endsWith("readdir_r", "closedir")
                .doesNotContain("close");
        assertThat(k.count("readdir_r")).isEqualTo(9); // 8 entries, then the end
        assertThat(k.count("closedir")).isOne();
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64", "macos-x86_64"})
    void list_emptyDirectory_isEmpty(String platform) throws Exception {
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform);
        assertThat(list(k)).isEmpty();
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64"})
    void list_thousandsOfEntries_allComeBack(String platform) throws Exception {
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            String name = String.format("run-%064x.state", i);
            k.add(name);
            expected.add(name);
        }
        assertThat(list(k)).containsExactlyElementsOf(expected);
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 700, 1002})
    void list_readdirFailsAtAnyEntry_refusedAsAWhole_streamClosedOnce_descriptorNeverClosedTwice(int skip) {
        // 1002: the call after the last entry, which would report the end: an error there is not the end.
        FakeDarwinDirectory k = new FakeDarwinDirectory("macos-aarch64");
        for (int i = 0; i < 1000; i++) {
            k.add(String.format("run-%064x.state", i));
        }
        k.fail("readdir_r", skip, "EIO");
        assertThat(refused(k).detail()).isEqualTo("readdir_r: EIO");
        assertThat(k.count("closedir")).isOne();
        assertThat(k.count("close")).isZero();
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64", "macos-x86_64"})
    void list_fdopendirFails_descriptorClosedOnce_noStream(String platform) {
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform).add("a.state");
        k.fail("fdopendir", 0, "EMFILE");
        assertThat(refused(k).detail()).isEqualTo("fdopendir: EMFILE");
        assertThat(k.calls()).containsExactly("openat", "fdopendir", "close");
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64", "macos-x86_64"})
    void list_fdopendirFailsUnexpectedly_descriptorClosedOnce_errorPropagates(String platform) {
        // Libc turns any Throwable of a downcall into an AssertionError: a DarwinOnly class that
        // failed to initialise (every later call then fails the same way), or native memory
        // exhausted allocating the call's arena. fdopendir made no stream, so the descriptor is
        // still the listing's; left open, every list() would leak one until EMFILE.
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform).add("a.state");
        k.failUnexpectedly("fdopendir", 0);
        assertThatThrownBy(() -> list(k)).isInstanceOf(AssertionError.class)
                .hasMessage("downcall failed unexpectedly");
        assertThat(k.calls()).containsExactly("openat", "fdopendir", "close");
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2, 3})
    void list_readdirFailsUnexpectedly_streamClosedOnce_errorPropagates(int skip) {
        FakeDarwinDirectory k = new FakeDarwinDirectory("macos-aarch64").add("a.state");
        k.failUnexpectedly("readdir_r", skip); // 3: the call that reports the end
        assertThatThrownBy(() -> list(k)).isInstanceOf(AssertionError.class)
                .hasMessage("downcall failed unexpectedly");
        assertThat(k.count("closedir")).isOne();
        assertThat(k.count("close")).isZero();
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64", "macos-x86_64"})
    void list_openatFails_refused_nothingOpened(String platform) {
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform).add("a.state");
        k.fail("openat", 0, "EMFILE");
        assertThat(refused(k).detail()).isEqualTo("openat: EMFILE");
        assertThat(k.calls()).containsExactly("openat");
        assertThat(k.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2})
    void list_malformedEntry_refusedAsAWhole_streamClosedOnce(int at) {
        FakeDarwinDirectory bad = new FakeDarwinDirectory("macos-aarch64");
        byte[] unterminated = bad.encode(9, "c.state".getBytes());
        ByteBuffer.wrap(unterminated).order(ByteOrder.LITTLE_ENDIAN).putShort(18, (short) 3); // d_namlen 3 of 7
        for (int i = 0; i < at; i++) {
            bad.add("ok-" + i);
        }
        bad.addRaw(unterminated).add("after");
        assertThat(refused(bad).detail()).startsWith("unreadable directory listing: ")
                .contains("not terminated");
        assertThat(bad.count("closedir")).isOne();
        assertThat(bad.count("readdir_r")).isEqualTo(2 + at + 1); // stopped at the bad entry
        assertThat(bad.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"macos-aarch64"})
    void list_closedirReportsAnError_theCompleteListStands(String platform) throws Exception {
        // closedir frees the stream and its descriptor whatever it reports (as close does).
        FakeDarwinDirectory k = new FakeDarwinDirectory(platform).add("a.state");
        FakeDarwinDirectory failing = new FakeDarwinDirectory(platform) {
            @Override
            public void closedir(long dir) throws PosixException {
                super.closedir(dir);
                throw new PosixException(mac.errnoValue("EIO"), "closedir");
            }
        }.add("a.state");
        assertThat(list(failing)).containsExactly("a.state").isEqualTo(list(k));
        assertThat(failing.violations()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void linuxTables_neverTakeTheStreamPath(String platform) throws Exception {
        // On Linux the listing is getdents64's; the fake of macOS has no getdents64 and says so.
        FakeDarwinDirectory k = new FakeDarwinDirectory("macos-aarch64");
        DirectoryListing linux = new DirectoryListing(k, PosixPlatform.forName(platform).orElseThrow());
        assertThatThrownBy(() -> linux.list(FakeDarwinDirectory.RETAINED, SHOWN)).isInstanceOf(AssertionError.class);
        assertThat(k.count("fdopendir")).isZero();
    }
}
