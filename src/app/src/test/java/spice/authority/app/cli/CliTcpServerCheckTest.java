package spice.authority.app.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import spice.authority.app.testing.ScriptedTcpPlatform;
import spice.authority.host.TcpServerCheck;

/**
 * The CLI proves a TCP listener is this user's before it sends the token, where the platform can
 * tell (Windows); elsewhere nothing is asked. Every refusal, failure or odd answer refuses.
 */
class CliTcpServerCheckTest {

    private static final InetSocketAddress HELPER = new InetSocketAddress(InetAddress.getLoopbackAddress(), 47878);
    private static final InetSocketAddress US = new InetSocketAddress(InetAddress.getLoopbackAddress(), 50123);

    @Test
    void platformThatCannotTell_asksNothing() throws Exception {
        ScriptedTcpPlatform p = new ScriptedTcpPlatform(false, new IllegalStateException("must not be asked"));
        TcpServerCheck c = CliTcpServerCheck.of(p);
        c.verify(HELPER, US);
        assertThat(p.asked).isEmpty();
    }

    @Test
    void listenerOfThisUser_passes_askedForTheHelpersEnd() throws Exception {
        ScriptedTcpPlatform p = new ScriptedTcpPlatform(true, 4242L);
        CliTcpServerCheck.of(p).verify(HELPER, US);
        assertThat(p.asked).containsExactly("47878->50123");
    }

    @Test
    void listenerNotProven_refused() {
        for (Object answer : new Object[] {new IOException("TCP peer 127.0.0.1:47878 refused: process 9 runs as another user"),
                new IllegalStateException("broken"), new UnsupportedOperationException("no"), 0L, -1L}) {
            assertThatThrownBy(() -> CliTcpServerCheck.of(new ScriptedTcpPlatform(true, answer)).verify(HELPER, US)).as(String.valueOf(answer))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("the process listening on 127.0.0.1:47878 is not proven to be one of this user's")
                    .hasMessageContaining("the token was not sent");
        }
    }
}
