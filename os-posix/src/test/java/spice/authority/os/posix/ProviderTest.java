package spice.authority.os.posix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import spice.authority.os.SecureDirectories;

/** ServiceLoader selection and the default location. */
class ProviderTest {

    @Test
    void serviceLoader_selectsPosixOnThisPlatform() {
        assertThat(SecureDirectories.provider()).isInstanceOf(PosixSecureDirectoryProvider.class);
        assertThat(SecureDirectories.provider()).isSameAs(SecureDirectories.provider());
        assertThat(SecureDirectories.provider().platform()).isEqualTo(PosixPlatform.current().orElseThrow().name);
        assertThat(SecureDirectories.provider().isSupported()).isTrue();
    }

    @Test
    void defaultDirectory_followsXdgStateHomeThenHome() {
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("linux-x86_64", "/x/state", "/home/u"))
                .isEqualTo("/x/state/spice-agent/authority");
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("linux-x86_64", "relative", "/home/u/"))
                .isEqualTo("/home/u/.local/state/spice-agent/authority");
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("linux-aarch64", null, "/home/u"))
                .isEqualTo("/home/u/.local/state/spice-agent/authority");
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("macos-aarch64", "/ignored", "/Users/u"))
                .isEqualTo("/Users/u/Library/Application Support/spice-agent/authority");
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("linux-x86_64", null, "?")).isNull();
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("linux-x86_64", null, null)).isNull();
        assertThat(PosixSecureDirectoryProvider.defaultDirectory("linux-x86_64", null, "/"))
                .isEqualTo("/.local/state/spice-agent/authority");
    }
}
