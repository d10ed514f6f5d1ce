package spice.authority.app.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The descriptor count behind the fd reserve follows descriptors as they are opened and closed. */
class QuotasDescriptorCountTest {

    private static long listed() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count() - 1; // the listing's own descriptor
        }
    }

    @Test
    void openDescriptors_fiftyMoreOpen_countsThemAndTheListingAgrees() throws IOException {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "needs /proc");
        long before = Quotas.openDescriptors();
        assertThat(before).isPositive();
        List<java.nio.channels.FileChannel> open = new ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) {
                open.add(java.nio.channels.FileChannel.open(Path.of("/proc/self/status")));
            }
            long during = Quotas.openDescriptors();
            // Other threads of the test JVM may open or close a descriptor meanwhile: a small slack.
            assertThat(during - before).isBetween(48L, 52L);
            assertThat(Math.abs(during - listed())).isLessThanOrEqualTo(2L);
        } finally {
            for (var c : open) {
                c.close();
            }
        }
        assertThat(Math.abs(Quotas.openDescriptors() - before)).isLessThanOrEqualTo(2L);
    }

    @Test
    void sizeIsCount_onlyOnLinux62AndLater() {
        assertThat(Quotas.sizeIsCount("Linux", "6.2.0")).isTrue();
        assertThat(Quotas.sizeIsCount("Linux", "6.18.44-fc-v1045")).isTrue();
        assertThat(Quotas.sizeIsCount("Linux", "7.0")).isTrue();
        assertThat(Quotas.sizeIsCount("Linux", "6.1.90")).isFalse();
        assertThat(Quotas.sizeIsCount("Linux", "5.15.0-microsoft-standard-WSL2")).isFalse();
        assertThat(Quotas.sizeIsCount("Linux", "4.4.0")).isFalse(); // gVisor reports an old version
        assertThat(Quotas.sizeIsCount("Linux", "")).isFalse();
        assertThat(Quotas.sizeIsCount("Mac OS X", "15.1")).isFalse();
    }
}
