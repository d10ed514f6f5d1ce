package spice.authority.app.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.SecureDirectories;
import spice.authority.os.SecureDirectoryProvider;

/**
 * The application carries both platform implementations at run time and selects exactly one: the
 * POSIX provider here, the Windows provider on Windows (that half has never run).
 */
class PlatformProvidersTest {

    private static List<String> providers() {
        return ServiceLoader.load(SecureDirectoryProvider.class).stream().map(p -> p.type().getName()).sorted().toList();
    }

    @Test
    void bothPlatformProviders_areOnTheRuntimeClassPath() {
        assertThat(providers()).containsExactly("spice.authority.os.posix.PosixSecureDirectoryProvider",
                "spice.authority.os.windows.WindowsSecureDirectoryProvider");
    }

    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void posix_isSelected_andTcpPeersRelyOnTheToken() {
        SecureDirectoryProvider p = SecureDirectories.provider();
        assertThat(p.getClass().getName()).isEqualTo("spice.authority.os.posix.PosixSecureDirectoryProvider");
        assertThat(p.identifiesTcpPeers()).isFalse();
    }

    @Test
    @EnabledOnOs(OS.WINDOWS)
    void windows_isSelected_andIdentifiesTcpPeers() {
        SecureDirectoryProvider p = SecureDirectories.provider();
        assertThat(p.getClass().getName()).isEqualTo("spice.authority.os.windows.WindowsSecureDirectoryProvider");
        assertThat(p.identifiesTcpPeers()).isTrue();
        assertThat(p.defaultDirectory()).endsWith("\\spice-agent\\authority");
    }
}
