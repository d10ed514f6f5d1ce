package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import spice.authority.os.OpenMode;
import spice.authority.os.SecureDirectoryProvider;
import spice.authority.os.UnsupportedPlatformException;

/** The provider is registered, and off Windows it refuses without loading any Windows library. */
class ProviderTest {

    @Test
    void registeredWithServiceLoader() {
        List<SecureDirectoryProvider> found = ServiceLoader.load(SecureDirectoryProvider.class).stream()
                .map(ServiceLoader.Provider::get).toList();
        assertThat(found).hasAtLeastOneElementOfType(WindowsSecureDirectoryProvider.class);
    }

    @Test
    @DisabledOnOs(OS.WINDOWS)
    void offWindows_unsupportedAndRefusesWithoutNativeCode() {
        WindowsSecureDirectoryProvider p = new WindowsSecureDirectoryProvider();
        assertThat(p.isSupported()).isFalse();
        assertThat(p.platform()).startsWith("unsupported ").endsWith("(os-windows)");
        assertThatThrownBy(() -> p.open("C:\\Users\\me\\authority", OpenMode.CREATE_OR_VALIDATE))
                .isInstanceOf(UnsupportedPlatformException.class);
        assertThatThrownBy(p::processWatcher).isInstanceOf(UnsupportedPlatformException.class);
        assertThat(p.identifiesTcpPeers()).isFalse();
        java.net.InetSocketAddress a = new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 1);
        assertThatThrownBy(() -> p.tcpPeerPid(a, a)).isInstanceOf(UnsupportedPlatformException.class);
    }
}
